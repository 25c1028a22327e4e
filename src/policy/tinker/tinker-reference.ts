/**
 * The KL reference on Tinker as the cookbook builds it (tinker-cookbook 0.6.1 `rl/metrics.py`
 * `incorporate_kl_penalty`): a SAMPLING client of the reference weights — the base model, or
 * sampler weights — scoring each sequence's tokens with `compute_logprobs` (one asample with
 * `prompt_logprobs`, `max_tokens 1`), instead of a second LoRA training run.
 *
 *   const reference = await TinkerReference.create({ baseModel: 'Qwen/Qwen3-4B-Instruct-2507' });
 *   const logprobs = await reference.logprobs({ sequences });   // index 0 = 0, as TrainablePolicy.logprobs
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import type { ReferencePolicy, TokenBatch } from '../types.ts';
import { TinkerClient, type TinkerClientOptions } from './tinker-client.ts';
import { TinkerSampler } from './tinker-sampler.ts';

export class TinkerReference implements ReferencePolicy {
  readonly times = { forward: 0 };

  private constructor(
    readonly client: TinkerClient,
    private readonly sampler: TinkerSampler,
    private readonly concurrency: number,
    /** Sampler weights saved for this reference alone, deleted on `close`. */
    private readonly owned?: string,
    /** The training model those weights were saved from, unloaded on `close`. */
    private readonly ownedModel?: string,
  ) {}

  /** A reference on a connected client scoring with `target`; `owned` weights are deleted and `ownedModel` unloaded on `close`. */
  static onClient(
    client: TinkerClient,
    target: { modelPath: string } | { baseModel: string },
    { concurrency = 16, owned, ownedModel }: { concurrency?: number; owned?: string; ownedModel?: string } = {},
  ): TinkerReference {
    return new TinkerReference(client, new TinkerSampler(client, target), concurrency, owned, ownedModel);
  }

  /** Scores with `modelPath` (sampler weights) when given, else with the base model. */
  static async create(
    options: TinkerClientOptions & { baseModel: string; modelPath?: string; concurrency?: number },
  ): Promise<TinkerReference> {
    if (typeof options.baseModel !== 'string' || options.baseModel === '')
      throw new InvalidArgumentError('TinkerReference needs { baseModel }', {});
    const client = new TinkerClient(options);
    await client.connect();
    const target =
      options.modelPath === undefined ? { baseModel: options.baseModel } : { modelPath: options.modelPath };
    return new TinkerReference(client, new TinkerSampler(client, target), options.concurrency ?? 16);
  }

  async logprobs(batch: TokenBatch): Promise<Float32Array[]> {
    if ((batch.temperature ?? 1) !== 1)
      throw new InvalidArgumentError(`TinkerReference scores at temperature 1 only; got ${batch.temperature}`, {
        temperature: batch.temperature,
      });
    const started = performance.now();
    const results = new Array<Float32Array>(batch.sequences.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < batch.sequences.length) {
        const index = next++;
        results[index] = await this.sampler.promptLogprobs(batch.sequences[index] ?? []);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(this.concurrency, batch.sequences.length) }, worker));
    } finally {
      this.times.forward += performance.now() - started;
    }
    return results;
  }

  /** Deletes the sampler weights saved for it (best effort: their server TTL, if any, still applies), unloads their model, stops the heartbeat. */
  async close(): Promise<void> {
    try {
      if (this.owned !== undefined) await this.client.deleteCheckpoint(this.owned).catch(() => undefined);
      if (this.ownedModel !== undefined)
        await this.client
          .submit('/api/v1/unload_model', { body: { model_id: this.ownedModel, type: 'unload_model' } }, 'UnloadModel')
          .catch(() => undefined);
    } finally {
      this.client.close();
    }
  }
}
