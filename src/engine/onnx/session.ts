/**
 * onnxruntime-node sessions for serialised graphs (CPU execution provider; its binary ships in
 * the npm package). `run` feeds host arrays and returns host arrays by output name. The native
 * binding is loaded by the first `OnnxSession.create`, not when agentrl is imported.
 */
import type * as Ort from 'onnxruntime-node';
import { OnnxRuntimeError } from './errors.ts';
import type { DataType } from './graph.ts';

export interface SessionOptions {
  /** Threads inside one op (ORT's intra-op pool); default: ORT's choice (all cores). */
  threads?: number;
  /** Let idle intra-op threads spin between ops (ORT's default, true); false frees the core for the host between runs. */
  spinning?: boolean;
  /** ORT's CPU memory arena (default on, as ORT); off, a run's buffers go back to the system after it (lower peak RSS when big sessions run in turn). */
  memoryArena?: boolean;
}

export type HostArray = Float32Array | Int32Array | BigInt64Array;

export interface Feed {
  dtype: DataType;
  shape: readonly number[];
  data: HostArray;
}

const ortType = { float32: 'float32', int32: 'int32', int64: 'int64', bool: 'bool', uint8: 'uint8' } as const;

/**
 * One onnxruntime session, reference-counted: `create` gives one hold, `retain` another (a call
 * running on it, or another `OnnxInference` sharing its initializers: transformer-model.ts
 * `forkAdapters`); `release` drops one, and the last one frees the native session.
 */
export class OnnxSession {
  private holds = 1;

  private constructor(
    private readonly Tensor: typeof Ort.Tensor,
    private readonly session: Ort.InferenceSession,
  ) {}

  static async create(
    model: Uint8Array,
    { threads, spinning = true, memoryArena = true }: SessionOptions = {},
  ): Promise<OnnxSession> {
    const { InferenceSession, Tensor } = await import('onnxruntime-node');
    try {
      const session = await InferenceSession.create(model, {
        executionProviders: ['cpu'],
        graphOptimizationLevel: 'all',
        executionMode: 'sequential',
        enableCpuMemArena: memoryArena,
        ...(threads === undefined ? {} : { intraOpNumThreads: threads, interOpNumThreads: 1 }),
        ...(spinning ? {} : { extra: { session: { intra_op: { allow_spinning: '0' } } } }),
      });
      return new OnnxSession(Tensor, session);
    } catch (error) {
      throw new OnnxRuntimeError(`onnxruntime could not load the graph: ${(error as Error).message}`);
    }
  }

  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  get outputNames(): readonly string[] {
    return this.session.outputNames;
  }

  /** Runs the graph; returns the requested outputs' data (all outputs when `fetches` is omitted). */
  async run(
    feeds: Record<string, Feed>,
    fetches?: readonly string[],
  ): Promise<Record<string, { shape: number[]; data: HostArray }>> {
    const tensors: Record<string, Ort.Tensor> = {};
    for (const [name, feed] of Object.entries(feeds))
      tensors[name] = new this.Tensor(ortType[feed.dtype], feed.data, feed.shape);
    const results =
      fetches === undefined ? await this.session.run(tensors) : await this.session.run(tensors, [...fetches]);
    const out: Record<string, { shape: number[]; data: HostArray }> = {};
    for (const [name, tensor] of Object.entries(results))
      out[name] = { shape: [...tensor.dims], data: tensor.data as HostArray };
    return out;
  }

  /** False once the last hold was released (the native session is freed). */
  get live(): boolean {
    return this.holds > 0;
  }

  /** One more hold on a live session; released sessions refuse. */
  retain(): this {
    if (this.holds === 0) throw new OnnxRuntimeError('the onnxruntime session was already released');
    this.holds += 1;
    return this;
  }

  /** Drops one hold; the last frees the native session. Releasing a released session does nothing. */
  async release(): Promise<void> {
    if (this.holds === 0) return;
    this.holds -= 1;
    if (this.holds === 0) await this.session.release();
  }
}
