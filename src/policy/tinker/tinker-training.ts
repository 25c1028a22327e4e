/**
 * The training calls of one Tinker model, as the SDK's `TrainingClient` sends them (tinker 0.38.0
 * `lib/public_interfaces/training_client.py`): every request carries the model's next `seq_id`
 * (1, 2, 3 … in submission order — the server applies them in that order, and a retried request
 * keeps its seq_id); `forward_backward` (and a forward pass: `forward_only`) is split into chunks
 * of at most `fwdbwd_max_chunk_len` datums and `fwdbwd_max_chunk_bytes_count` estimated bytes
 * (4 bytes per token + the tensors), each chunk its own seq_id, all chunks sent at once with the
 * first one last (the server starts on it once the rest are queued); `optim_step` may be sent
 * while the forward_backward before it is still running (`submitStep` overlaps them).
 *
 * Wire: 'protobuf' (the SDK's: `application/x-protobuf` ForwardBackwardRequest, ./tinker-proto.ts)
 * or 'json' (servers that predate it, e.g. SkyRL 0.3.0: `forward_backward_input` JSON, `/forward`).
 */
import { TinkerError } from './tinker-error.ts';
import type { SubmitBody, TinkerClient } from './tinker-client.ts';
import type { TinkerRequestType } from './tinker-future.ts';
import { encodeForwardBackward } from './tinker-proto.ts';
import type { Datum } from './wire.ts';
import { forwardBackwardBody } from './fwdbwd-body.ts';

export type TinkerWire = 'protobuf' | 'json';
export const tinkerWires: readonly TinkerWire[] = ['protobuf', 'json'];

export interface ForwardBackwardCall {
  data: readonly Datum[];
  lossFunction: string;
  lossConfig?: Record<string, number>;
  forwardOnly: boolean;
}

/** The chunks one forward_backward is sent as (the SDK's `_chunked_requests_generator`). */
export function chunkData(data: readonly Datum[], maxLength: number, maxBytes: number): Datum[][] {
  const chunks: Datum[][] = [];
  let current: Datum[] = [];
  let bytes = 0;
  for (const datum of data) {
    const size =
      datum.model_input.chunks.reduce((sum, chunk) => sum + chunk.tokens.length * 4, 0) +
      Object.values(datum.loss_fn_inputs).reduce(
        (sum, tensor) => sum + tensor.data.length * (tensor.dtype === 'int64' ? 8 : 4),
        0,
      );
    if ((current.length > 0 && bytes + size > maxBytes) || current.length === maxLength) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(datum);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** Outputs of the chunks of one call joined (the SDK's `combine_fwd_bwd_output_results`: outputs concatenated, metrics averaged by datum count for `:mean`, summed for `:sum`). */
function combine(
  results: readonly unknown[],
  counts: readonly number[],
): { loss_fn_outputs: unknown[]; metrics: Record<string, number> } {
  const outputs: unknown[] = [];
  const metrics: Record<string, number> = {};
  const total = counts.reduce((sum, count) => sum + count, 0);
  results.forEach((result, index) => {
    const record = (result ?? {}) as { loss_fn_outputs?: unknown; metrics?: Record<string, unknown> };
    if (Array.isArray(record.loss_fn_outputs)) outputs.push(...record.loss_fn_outputs);
    for (const [key, value] of Object.entries(record.metrics ?? {})) {
      if (typeof value !== 'number') continue;
      const weight = key.endsWith(':sum') || results.length === 1 ? 1 : (counts[index] ?? 0) / Math.max(total, 1);
      metrics[key] = (metrics[key] ?? 0) + value * weight;
    }
  });
  return { loss_fn_outputs: outputs, metrics };
}

export class TinkerTraining {
  private nextSeqId: number;
  /** The POST of the latest request: the next one is sent once the server has accepted it (seq_id order). */
  private turn: Promise<unknown> = Promise.resolve();

  /** `firstSeqId`: 1 for a model made by create_model, 1 after a create-via-load (its load was seq 0). */
  constructor(
    private readonly client: TinkerClient,
    readonly modelId: string,
    private readonly wire: TinkerWire,
    firstSeqId = 1,
  ) {
    this.nextSeqId = firstSeqId;
  }

  /** Reserves the next `count` seq_ids (submission order). */
  reserve(count = 1): number {
    const first = this.nextSeqId;
    this.nextSeqId += count;
    return first;
  }

  /**
   * Sends a request on this model in turn: its POST waits for the previous one to be accepted, so
   * the server receives seq_ids in order; resolves with its pending result (not awaited here).
   */
  private inTurn(path: string, body: SubmitBody, requestType: TinkerRequestType): Promise<unknown> {
    const sent = this.turn.catch(() => undefined).then(() => this.client.send(path, body, requestType));
    this.turn = sent;
    return sent.then(({ result }) => result);
  }

  /** One forward_backward (or forward) call: chunked, chunks in flight at once, outputs in datum order. */
  async forwardBackward(
    call: ForwardBackwardCall,
  ): Promise<{ loss_fn_outputs: unknown[]; metrics: Record<string, number> }> {
    const { config } = this.client;
    const chunks = chunkData(call.data, config.fwdbwdMaxChunkLen, config.fwdbwdMaxChunkBytes);
    const first = this.reserve(chunks.length);
    // Chunks are POSTed in seq_id order, each once the previous is accepted, and computed together.
    const results = await Promise.all(chunks.map((chunk, index) => this.sendChunk(call, chunk, first + index)));
    return combine(
      results,
      chunks.map((chunk) => chunk.length),
    );
  }

  private sendChunk(call: ForwardBackwardCall, data: Datum[], seqId: number): Promise<unknown> {
    const requestType = call.forwardOnly ? 'Forward' : 'ForwardBackward';
    if (this.wire === 'protobuf') {
      const protobuf = encodeForwardBackward({
        modelId: this.modelId,
        seqId,
        data,
        lossFunction: call.lossFunction,
        ...(call.lossConfig === undefined ? {} : { lossConfig: call.lossConfig }),
        forwardOnly: call.forwardOnly,
      });
      const body = forwardBackwardBody(protobuf, { serverAsks: this.client.config.protoCompressFwdbwd });
      return this.inTurn('/api/v1/forward_backward', body, requestType);
    }
    const input = {
      data,
      loss_fn: call.lossFunction,
      ...(call.lossConfig === undefined ? {} : { loss_fn_config: call.lossConfig }),
    };
    return call.forwardOnly
      ? this.inTurn(
          '/api/v1/forward',
          { body: { forward_input: input, model_id: this.modelId, seq_id: seqId } },
          requestType,
        )
      : this.inTurn(
          '/api/v1/forward_backward',
          { body: { forward_backward_input: input, model_id: this.modelId, seq_id: seqId } },
          requestType,
        );
  }

  /** optim_step with Adam (`grad_clip_norm` 0 = no clipping); its metrics. */
  async optimStep(adam: {
    learning_rate: number;
    beta1: number;
    beta2: number;
    eps: number;
    weight_decay: number;
    grad_clip_norm: number;
  }): Promise<Record<string, unknown>> {
    const answer = (await this.inTurn(
      '/api/v1/optim_step',
      { body: { model_id: this.modelId, seq_id: this.reserve(), type: 'optim_step', adam_params: adam } },
      'OptimStep',
    )) as { metrics?: Record<string, unknown> | null } | null;
    return answer?.metrics ?? {};
  }

  /** save_weights (training state, `ttl_seconds` undefined = kept) or save_weights_for_sampler; the tinker:// path. */
  async save(kind: 'weights' | 'sampler_weights', name: string, ttlSeconds: number | undefined): Promise<string> {
    const sampler = kind === 'sampler_weights';
    const path = sampler ? '/api/v1/save_weights_for_sampler' : '/api/v1/save_weights';
    const body = sampler
      ? {
          model_id: this.modelId,
          path: name,
          kind: 'snapshot',
          seq_id: this.reserve(),
          ttl_seconds: ttlSeconds,
          type: 'save_weights_for_sampler',
        }
      : {
          model_id: this.modelId,
          path: name,
          seq_id: this.reserve(),
          ttl_seconds: ttlSeconds,
          overwrite: false,
          type: 'save_weights',
        };
    if (ttlSeconds === undefined) delete (body as { ttl_seconds?: number }).ttl_seconds;
    const answer = (await this.inTurn(path, { body }, sampler ? 'SaveWeightsForSampler' : 'SaveWeights')) as {
      path?: unknown;
    } | null;
    if (typeof answer?.path !== 'string')
      throw new TinkerError(`POST ${path}: no path in the result`, {
        endpoint: `POST ${path}`,
        status: 200,
        body: JSON.stringify(answer).slice(0, 500),
        attempts: 1,
      });
    return answer.path;
  }
}
