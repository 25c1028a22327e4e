import { AgentRlError } from '../../core/errors.ts';

/** The training gateway could not collect what was asked (every agent run failed, a session is unknown). */
export class GatewayError extends AgentRlError {
  constructor(message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super('GATEWAY', message, details, options);
  }
}
