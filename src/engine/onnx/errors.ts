import { AgentRlError } from '../../core/errors.ts';

/** onnxruntime refused a graph or a run; the message carries ORT's own words. */
export class OnnxRuntimeError extends AgentRlError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('ONNX_RUNTIME', message, details);
  }
}
