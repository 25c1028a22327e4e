/**
 * Sampling from Tinker as the SDK's `SamplingClient` does (tinker 0.38.0
 * `lib/public_interfaces/sampling_client.py`): a sampling session per set of weights
 * (`create_sampling_session` on sampler weights, or on the base model), then
 * `POST /api/v1/asample { sampling_session_id, seq_id, num_samples, prompt, sampling_params, … }`
 * with `X-Tinker-Sampling-Backpressure: 1` and no transport retries: a 429 waits 1 s (5 s for a
 * prompt over 128 KiB) and sends again; an expired promise (410) is sent again under a new seq_id
 * after the SDK's backoff. `seq_id` counts from 0 per sampling session.
 *
 * `num_samples = G` samples a group in ONE request (the prompt is prefilled once);
 * `promptLogprobs` is the SDK's `compute_logprobs` (`max_tokens 1`, `prompt_logprobs true`): how the
 * KL reference scores sequences on the base model without a training run.
 */
import { transportDelayMs } from './backoff.ts';
import type { TinkerClient } from './tinker-client.ts';
import { TinkerError } from './tinker-error.ts';
import { FutureExpiredError } from './tinker-future.ts';
import { defaultSleep } from './tinker-http.ts';
import { modelInput } from './wire.ts';

export interface SamplingParams {
  max_tokens: number;
  seed: number;
  stop: number[];
  temperature: number;
  top_k: number;
  top_p: number;
}

export interface SampledSequence {
  tokens: number[];
  logprobs: number[];
}

/** A prompt's estimated bytes (the SDK's `chunk.length * 10`). */
const estimatedBytes = (prompt: readonly number[]): number => prompt.length * 10;

export class TinkerSampler {
  private sessionId: Promise<string> | undefined;
  private nextSeqId = 0;

  constructor(
    private readonly client: TinkerClient,
    readonly target: { modelPath: string } | { baseModel: string },
    private readonly sleep: (ms: number) => Promise<void> = defaultSleep,
  ) {}

  private session(): Promise<string> {
    this.sessionId ??= this.client.createSamplingSession(this.target);
    this.sessionId.catch(() => {
      this.sessionId = undefined;
    });
    return this.sessionId;
  }

  /** One asample request (with the SDK's resubmission rules); the raw result. */
  private async request(
    prompt: readonly number[],
    numSamples: number,
    params: SamplingParams,
    promptLogprobs: boolean,
  ): Promise<unknown> {
    const sessionId = await this.session();
    for (let attempt = 0; ; attempt++) {
      const body = {
        num_samples: numSamples,
        prompt: modelInput(prompt),
        sampling_params: params,
        sampling_session_id: sessionId,
        seq_id: this.nextSeqId++,
        prompt_logprobs: promptLogprobs,
        topk_prompt_logprobs: 0,
        topk_sample_logprobs: 0,
        prompt_alt_tokens_k: 0,
        record_stability_info: false,
        type: 'sample',
      };
      try {
        return await this.client.submit(
          '/api/v1/asample',
          { body, headers: { 'X-Tinker-Sampling-Backpressure': '1' } },
          'Sample',
        );
      } catch (error) {
        if (error instanceof TinkerError && error.status === 429 && !(error instanceof FutureExpiredError)) {
          await this.sleep(estimatedBytes(prompt) <= 128 * 1024 ? 1000 : 5000);
          continue;
        }
        if (error instanceof FutureExpiredError) {
          await this.sleep(transportDelayMs(attempt, Math.random()));
          continue;
        }
        throw error;
      }
    }
  }

  /** `numSamples` sequences from one prompt, in the server's order. */
  async sample(prompt: readonly number[], numSamples: number, params: SamplingParams): Promise<SampledSequence[]> {
    const answer = (await this.request(prompt, numSamples, params, false)) as { sequences?: unknown } | null;
    const sequences = Array.isArray(answer?.sequences)
      ? (answer.sequences as { tokens?: unknown; logprobs?: unknown }[])
      : [];
    if (sequences.length !== numSamples || !sequences.every(isSequence))
      throw new TinkerError(
        `POST /api/v1/asample: expected ${numSamples} sequences with one log-prob per token, got ${JSON.stringify(answer).slice(0, 200)}`,
        { endpoint: 'POST /api/v1/asample', status: 200, body: JSON.stringify(answer).slice(0, 500), attempts: 1 },
      );
    return sequences.map((sequence) => ({
      tokens: sequence.tokens as number[],
      logprobs: sequence.logprobs as number[],
    }));
  }

  /** Log-probs of each prompt token under these weights (index 0 = 0, agentrl alignment). */
  async promptLogprobs(prompt: readonly number[]): Promise<Float32Array> {
    const params: SamplingParams = { max_tokens: 1, seed: 0, stop: [], temperature: 1, top_k: -1, top_p: 1 };
    const answer = (await this.request(prompt, 1, params, true)) as { prompt_logprobs?: unknown } | null;
    const given = answer?.prompt_logprobs;
    // The SDK's SampleResponse has one entry per prompt token, null/NaN first; SkyRL 0.3.0 (JSON wire) leaves the first out.
    const values = Array.isArray(given) && given.length === prompt.length - 1 ? [null, ...given] : given;
    if (
      !Array.isArray(values) ||
      values.length !== prompt.length ||
      !values.slice(1).every((x) => typeof x === 'number')
    )
      throw new TinkerError(`POST /api/v1/asample: prompt_logprobs is not ${prompt.length} entries (null first)`, {
        endpoint: 'POST /api/v1/asample',
        status: 200,
        body: JSON.stringify(answer).slice(0, 500),
        attempts: 1,
      });
    const logprobs = new Float32Array(prompt.length);
    logprobs.set(values.slice(1) as number[], 1);
    return logprobs;
  }
}

function isSequence(sequence: { tokens?: unknown; logprobs?: unknown }): boolean {
  return (
    Array.isArray(sequence.tokens) &&
    Array.isArray(sequence.logprobs) &&
    sequence.tokens.length === sequence.logprobs.length &&
    sequence.tokens.length > 0
  );
}
