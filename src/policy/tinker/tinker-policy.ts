/**
 * `TinkerPolicy`: a LoRA training run on a Tinker server (hosted Tinker, or SkyRL tx's open
 * implementation) as a `TrainablePolicy`.
 *
 *   const policy = await TinkerPolicy.create({ baseUrl: 'http://127.0.0.1:8000', baseModel: '/models/smol', rank: 8, tokenizer });
 *   const generations = await policy.generateBatch(requests);          // asample from the latest sampler weights
 *   await policy.forwardBackward({ sequences }, rlLoss(batch, config)); // forward → TokenLoss → weighted backward
 *   await policy.optimStep({ learningRate: 1e-4 });                     // Adam on the server; sampler weights go stale
 *
 * What each contract method sends (./wire.ts for the encodings):
 * - `logprobs` → `forward` (cross_entropy with weights 1; the answer's per-token log-probs);
 * - `forwardBackward` → `forward` (only when the loss reads the current log-probs or the
 *   encoding needs them) → `TokenLoss.compute` here → `forward_backward` with the gradient as
 *   per-token weights, so any loss of per-token log-probs trains exactly;
 * - `optimStep` → `optim_step` with AdamParams; the server reports no gradient norm (NaN here)
 *   and does not clip (`maxGradNorm` is refused unless 0);
 * - `generate`/`generateBatch` → `save_weights_for_sampler` once after each optimizer step, then
 *   one `asample` per request (num_samples 1, stop = the stop-token ids, seed `rowSeed(seed, row)`
 *   so the rows of one batch differ); stop strings are applied here. SkyRL tx returns the log-probs of the temperature-1 distribution whatever the
 *   temperature, so `logprobs` matches sampled log-probs at temperature 1;
 * - `save(path)` → `save_weights` (a training checkpoint on the server); the local folder gets a
 *   `tinker-checkpoint.json` naming its `tinker://` path, which `load(path)` restores.
 *
 * Refused at construction: a value head (PPO's critic) and an entropy term — the remote trainer
 * returns neither values nor entropies. A loss that still asks for them is refused at
 * `forwardBackward`. The GRPO family (ppo-clip / GSPO losses with group advantages, KL to a
 * reference from `logprobs`) needs only per-token log-probs and works.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError, InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import type { TokenLoss } from '../../core/loss.ts';
import { byteTokenizer, type Tokenizer } from '../../chat/tokenizer.ts';
import type { ChatFormat } from '../../chat/chat-format.ts';
import { resolveRequest, type ResolvedRequest } from '../request.ts';
import type {
  GenerateRequest,
  Generation,
  LossReport,
  OptimOptions,
  OptimReport,
  PolicyCapabilities,
  TokenBatch,
  TrainablePolicy,
} from '../types.ts';
import { TinkerClient } from './tinker-client.ts';
import { TinkerError } from './tinker-error.ts';
import { checkOptions, refuseUnsupportedGradients, type TinkerPolicyOptions } from './tinker-options.ts';
import { greedyDuplicates, rowSeed, toGeneration } from './tinker-sampling.ts';
import { gradientData, logprobsOfOutput, modelInput, scoringData, type LossReduction } from './wire.ts';

/** Wall time per phase (ms), for the time split: sampling, forward_backward, optim_step, sampler sync. */
export interface TinkerTimes {
  sample: number;
  forward: number;
  forwardBackward: number;
  optimStep: number;
  samplerSync: number;
}

export class TinkerPolicy implements TrainablePolicy {
  readonly backend = 'tinker';
  /** No value head, no entropies, no gradient clipping on the server (see the header). */
  readonly capabilities: PolicyCapabilities = { valueHead: false, entropy: false, gradientClipping: false };
  readonly tokenizer: Tokenizer;
  readonly contextWindow: number;
  readonly chatFormat?: ChatFormat;
  readonly client: TinkerClient;
  readonly modelId: string;
  readonly times: TinkerTimes = { sample: 0, forward: 0, forwardBackward: 0, optimStep: 0, samplerSync: 0 };
  private readonly options: TinkerPolicyOptions;
  private readonly reduction: LossReduction;
  private step = 0;
  private samplerPath: string | undefined;

  private constructor(options: TinkerPolicyOptions, client: TinkerClient, modelId: string) {
    this.options = options;
    this.client = client;
    this.modelId = modelId;
    this.tokenizer = options.chatFormat?.tokenizer ?? options.tokenizer ?? byteTokenizer;
    if (options.chatFormat !== undefined) this.chatFormat = options.chatFormat;
    this.contextWindow = options.contextWindow ?? Infinity;
    this.reduction = options.lossReduction ?? 'sum';
  }

  /** Checks the options (refusing what the server cannot do), opens a session and creates the LoRA run. */
  static async create(options: TinkerPolicyOptions): Promise<TinkerPolicy> {
    checkOptions(options);
    const client = new TinkerClient(options);
    try {
      const modelId =
        options.modelId ??
        (await client.createModel({ baseModel: options.baseModel, rank: options.rank ?? 8, seed: options.seed ?? 0 }));
      return new TinkerPolicy(options, client, modelId);
    } catch (error) {
      client.close();
      throw error;
    }
  }

  async generate(request: GenerateRequest): Promise<Generation> {
    const [generation] = await this.generateBatch([request]);
    return generation!;
  }

  async generateBatch(requests: readonly GenerateRequest[]): Promise<Generation[]> {
    const resolved = requests.map((request) => resolveRequest(request, this.tokenizer, this.contextWindow));
    if (resolved.length === 0) return [];
    const modelPath = await this.samplerWeights();
    const started = performance.now();
    const results = new Array<Generation>(resolved.length);
    // Equal greedy requests are sent once: the server's batched decode can differ in the last
    // float bits by row position, and a greedy generation is a function of its request.
    const firstOf = greedyDuplicates(resolved);
    const unique = firstOf.flatMap((first, index) => (first === index ? [index] : []));
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < unique.length) {
        const index = at(unique, next++, 'unique requests');
        const request = at(resolved, index, 'requests');
        results[index] = await this.sampleOne(request, modelPath, rowSeed(request.seed, index));
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 16, unique.length) }, worker));
    } finally {
      this.times.sample += performance.now() - started;
    }
    return firstOf.map((first) => structuredClone(at(results, first, 'generations')));
  }

  async logprobs(batch: TokenBatch): Promise<Float32Array[]> {
    if ((batch.temperature ?? 1) !== 1) {
      throw new InvalidArgumentError(
        `TinkerPolicy scores at temperature 1 only (the forward endpoint has no temperature); got ${batch.temperature}`,
        { temperature: batch.temperature },
      );
    }
    if (batch.sequences.length === 0) return [];
    const started = performance.now();
    try {
      return await this.forward(batch.sequences);
    } finally {
      this.times.forward += performance.now() - started;
    }
  }

  async forwardBackward(batch: TokenBatch, loss: TokenLoss): Promise<LossReport> {
    if ((batch.temperature ?? 1) !== 1)
      throw new InvalidArgumentError(`forwardBackward trains at temperature 1; got temperature ${batch.temperature}`, {
        temperature: batch.temperature,
      });
    const { sequences } = batch;
    const needsCurrent = loss.dependsOnCurrent || this.reduction === 'sequence-mean';
    let current: Float32Array[] | undefined;
    if (needsCurrent) current = await this.logprobs({ sequences });
    const output = loss.compute({
      logprobs: current ?? sequences.map((sequence) => new Float32Array(sequence.length)),
    });
    refuseUnsupportedGradients(output.gradValues, output.gradEntropies);
    const { lossFunction, data } = gradientData(sequences, output.gradLogprobs, this.reduction, current);
    const started = performance.now();
    let answer: unknown;
    try {
      answer = await this.client.call('/api/v1/forward_backward', {
        model_id: this.modelId,
        forward_backward_input: { data, loss_fn: lossFunction },
      });
    } finally {
      this.times.forwardBackward += performance.now() - started;
    }
    let report = output;
    if (!loss.dependsOnCurrent && current === undefined) {
      // The gradient did not need the log-probs; the loss value does: read them off the answer.
      const logprobs = this.parseLogprobs(answer, sequences, '/api/v1/forward_backward');
      report = loss.compute({ logprobs });
    }
    const tokens = output.gradLogprobs.reduce(
      (sum, grad) => sum + grad.reduce((count, g) => count + (g !== 0 ? 1 : 0), 0),
      0,
    );
    return { ...report, tokens };
  }

  async optimStep(options: OptimOptions): Promise<OptimReport> {
    if ((options.maxGradNorm ?? 0) !== 0) {
      throw new InvalidArgumentError(
        `TinkerPolicy cannot clip the gradient norm (the server's optim_step has no clipping); set maxGradNorm to 0, got ${options.maxGradNorm}`,
        { maxGradNorm: options.maxGradNorm },
      );
    }
    const adam_params = {
      learning_rate: options.learningRate,
      beta1: options.beta1 ?? 0.9,
      beta2: options.beta2 ?? 0.95,
      eps: options.epsilon ?? this.options.epsilon ?? 1e-8,
      weight_decay: options.weightDecay ?? 0,
    };
    const started = performance.now();
    let answer: unknown;
    try {
      answer = await this.client.call('/api/v1/optim_step', {
        model_id: this.modelId,
        adam_params,
        type: 'optim_step',
      });
    } finally {
      this.times.optimStep += performance.now() - started;
    }
    this.step += 1;
    this.samplerPath = undefined;
    const metrics = (answer as { metrics?: Record<string, unknown> | null } | null)?.metrics ?? {};
    const gradNorm = Number(metrics.grad_norm ?? metrics['grad_norm:mean'] ?? NaN);
    return { gradNorm, step: this.step };
  }

  /**
   * The `tinker://…/sampler_weights/…` path of the current weights, saved once per optimizer step
   * (the contract's sampler-weight sync: `generate` calls it; a trainer may call it early to
   * overlap the save with other work).
   */
  async samplerWeights(): Promise<string> {
    if (this.samplerPath !== undefined) return this.samplerPath;
    const started = performance.now();
    try {
      const name = `agentrl-step-${this.step}-${Date.now().toString(36)}`;
      const answer = (await this.client.call('/api/v1/save_weights_for_sampler', {
        model_id: this.modelId,
        path: name,
        type: 'save_weights_for_sampler',
      })) as { path?: unknown };
      this.samplerPath =
        typeof answer.path === 'string' ? answer.path : `tinker://${this.modelId}/sampler_weights/${name}`;
      return this.samplerPath;
    } finally {
      this.times.samplerSync += performance.now() - started;
    }
  }

  /** Saves the training state on the server and writes `<path>/tinker-checkpoint.json` pointing at it. */
  async save(path: string): Promise<void> {
    const record = await this.saveRecord();
    await mkdir(path, { recursive: true });
    await writeFile(join(path, 'tinker-checkpoint.json'), `${JSON.stringify(record, null, 2)}\n`);
  }

  /** Loads the weights and optimizer state a `save` wrote (from this or another run of the same base model). */
  async load(path: string): Promise<void> {
    const file = join(path, 'tinker-checkpoint.json');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new CheckpointError(`${file} is not a Tinker checkpoint record (${(error as Error).message})`, { file });
    }
    await this.loadRecord(text, file);
  }

  /** The resumable state (contract): the checkpoint record of a `save_weights` (weights and Adam state stay on the server). */
  async saveState(): Promise<Uint8Array> {
    return new TextEncoder().encode(JSON.stringify(await this.saveRecord()));
  }

  async loadState(state: Uint8Array): Promise<void> {
    await this.loadRecord(new TextDecoder().decode(state), '<state>');
  }

  private async saveRecord(): Promise<Record<string, unknown>> {
    const name = `agentrl-step-${this.step}-${Date.now().toString(36)}`;
    const answer = (await this.client.call('/api/v1/save_weights', {
      model_id: this.modelId,
      path: name,
      type: 'save_weights',
    })) as { path?: unknown };
    const tinkerPath = typeof answer.path === 'string' ? answer.path : `tinker://${this.modelId}/weights/${name}`;
    return {
      format: 'agentrl-tinker-checkpoint',
      baseUrl: this.client.baseUrl,
      baseModel: this.options.baseModel,
      modelId: this.modelId,
      tinkerPath,
      step: this.step,
    };
  }

  private async loadRecord(text: string, file: string): Promise<void> {
    let record: { tinkerPath?: unknown; step?: unknown };
    try {
      record = JSON.parse(text) as typeof record;
    } catch (error) {
      throw new CheckpointError(`${file} is not a Tinker checkpoint record (${(error as Error).message})`, { file });
    }
    if (typeof record.tinkerPath !== 'string') throw new CheckpointError(`${file} has no tinkerPath`, { file });
    await this.client.call('/api/v1/load_weights', {
      model_id: this.modelId,
      path: record.tinkerPath,
      type: 'load_weights',
    });
    this.step = typeof record.step === 'number' ? record.step : this.step;
    this.samplerPath = undefined;
  }

  /**
   * Frees the LoRA run on the server (`unload_model`; a server holds few at once) and stops the
   * heartbeat. `{ unload: false }` keeps the run (and its sampler weights) for another client.
   */
  async close({ unload = true }: { unload?: boolean } = {}): Promise<void> {
    try {
      if (!unload) return;
      const answer = (await this.client.request('POST', '/api/v1/unload_model', {
        model_id: this.modelId,
        type: 'unload_model',
      })) as { request_id?: unknown };
      if (answer.request_id !== undefined)
        await this.client.retrieveFuture(String(answer.request_id), 'POST /api/v1/unload_model');
    } finally {
      this.client.close();
    }
  }

  private async forward(sequences: readonly (readonly number[])[]): Promise<Float32Array[]> {
    const answer = await this.client.call('/api/v1/forward', {
      model_id: this.modelId,
      forward_input: { data: scoringData(sequences), loss_fn: 'cross_entropy' },
    });
    return this.parseLogprobs(answer, sequences, '/api/v1/forward');
  }

  private parseLogprobs(answer: unknown, sequences: readonly (readonly number[])[], path: string): Float32Array[] {
    const logprobs = logprobsOfOutput(answer, sequences);
    if (typeof logprobs === 'string')
      throw new TinkerError(`POST ${path}: ${logprobs}`, {
        endpoint: `POST ${path}`,
        status: 200,
        body: JSON.stringify(answer).slice(0, 500),
        attempts: 1,
      });
    return logprobs;
  }

  private async sampleOne(request: ResolvedRequest, modelPath: string, seed: number): Promise<Generation> {
    const body = {
      num_samples: 1,
      prompt: modelInput(request.prompt),
      sampling_params: {
        max_tokens: Math.min(
          request.maxNewTokens,
          Number.isFinite(this.contextWindow) ? this.contextWindow - request.prompt.length : Infinity,
        ),
        seed,
        stop: [...request.stopTokens],
        temperature: request.temperature,
        top_k: -1,
        top_p: request.topP,
      },
      model_path: modelPath,
      type: 'sample',
    };
    const answer = await this.client.call('/api/v1/asample', body);
    const sequence = (
      answer as { sequences?: { tokens?: unknown; logprobs?: unknown; stop_reason?: unknown }[] } | null
    )?.sequences?.[0];
    const tokens = sequence?.tokens;
    const logprobs = sequence?.logprobs;
    if (
      !Array.isArray(tokens) ||
      !Array.isArray(logprobs) ||
      tokens.length !== logprobs.length ||
      tokens.length === 0
    ) {
      throw new TinkerError('POST /api/v1/asample: the answer has no sequence with one log-prob per token', {
        endpoint: 'POST /api/v1/asample',
        status: 200,
        body: JSON.stringify(answer).slice(0, 500),
        attempts: 1,
      });
    }
    return toGeneration(tokens as number[], logprobs as number[], request, this.tokenizer);
  }
}
