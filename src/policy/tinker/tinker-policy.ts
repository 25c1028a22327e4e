/**
 * `TinkerPolicy`: a LoRA training run on a Tinker server (hosted Tinker, or SkyRL's open
 * implementation) as a `TrainablePolicy`, speaking the official SDK's protocol (./tinker-client.ts).
 *
 *   const policy = await TinkerPolicy.create({ baseModel: 'Qwen/Qwen3-4B-Instruct-2507', tokenizer });
 *   const generations = await policy.generateBatch(requests);          // one asample per distinct prompt, num_samples = G
 *   await policy.trainStep({ sequences }, rlLoss(batch, config), { learningRate: 1e-5, maxGradNorm: 1 });
 *   console.log(policy.storage.describe());                             // what stays on the server
 *
 * What each contract method sends (./wire.ts for the loss encodings):
 * - `logprobs` → forward_backward with `forward_only` (cross_entropy, weights 1);
 * - `forwardBackward` → the loss as the server's own (`importance_sampling`, `ppo`, `cispo`:
 *   ./server-loss.ts) in ONE round trip when the loss carries a `serverLoss`; otherwise the SDK's
 *   `forward_backward_custom` pattern: a forward only when the gradient needs the current log-probs,
 *   `TokenLoss.compute` here, then forward_backward with the gradient as per-token inputs;
 * - `optimStep` → optim_step with AdamParams, `grad_clip_norm` = `maxGradNorm` (protobuf servers);
 *   `trainStep` sends optim_step right behind forward_backward without waiting for its result;
 * - `generate`/`generateBatch` → save_weights_for_sampler (TTL, the previous ones deleted) once per
 *   optimizer step, a sampling session on them, and one asample per distinct prompt with
 *   `num_samples` = its rows (equal greedy rows sampled once);
 * - `save`/`saveState` → save_weights; `load`/`loadState` → a FRESH model created by load_weights
 *   as its first request (hosted Tinker accepts load_weights only then), the old one unloaded.
 *
 * The sampler's log-probs are not the trainer's (`samplerMatchesTrainer` false: other kernels,
 * and SkyRL reports temperature-1 log-probs whatever the temperature).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError, InvalidArgumentError } from '../../core/errors.ts';
import type { TokenLoss } from '../../core/loss.ts';
import { byteTokenizer, type Tokenizer } from '../../chat/tokenizer.ts';
import type { ChatFormat } from '../../chat/chat-format.ts';
import type {
  GenerateRequest,
  Generation,
  LossReport,
  OptimOptions,
  OptimReport,
  PolicyCapabilities,
  StepReport,
  TokenBatch,
  TrainablePolicy,
} from '../types.ts';
import { TinkerClient } from './tinker-client.ts';
import { TinkerReference } from './tinker-reference.ts';
import { checkOptions, type TinkerPolicyOptions } from './tinker-options.ts';
import { sampleBatch } from './tinker-generate.ts';
import { TinkerSampler } from './tinker-sampler.ts';
import { TinkerStorage } from './tinker-storage.ts';
import { submitLoss, scoreSequences, checkTemperature } from './tinker-loss-call.ts';
import { TinkerTraining, type TinkerWire } from './tinker-training.ts';
import { type LossReduction, reportedGradNorm } from './wire.ts';

/** Wall time per phase (ms), for the time split: sampling, forward, forward_backward, optim_step, sampler sync. */
export interface TinkerTimes {
  sample: number;
  forward: number;
  forwardBackward: number;
  optimStep: number;
  samplerSync: number;
}

interface CheckpointRecord {
  tinkerPath: string;
  step: number;
}

export class TinkerPolicy implements TrainablePolicy {
  readonly backend = 'tinker';
  /** The sampler's log-probs come from other kernels than the trainer's: a trainer re-scores old log-probs. */
  readonly samplerMatchesTrainer = false;
  readonly capabilities: PolicyCapabilities;
  readonly tokenizer: Tokenizer;
  readonly contextWindow: number;
  readonly chatFormat?: ChatFormat;
  readonly client: TinkerClient;
  readonly times: TinkerTimes = { sample: 0, forward: 0, forwardBackward: 0, optimStep: 0, samplerSync: 0 };
  readonly storage: TinkerStorage;
  private readonly options: TinkerPolicyOptions;
  private readonly reduction: LossReduction;
  private readonly wire: TinkerWire;
  private training: TinkerTraining;
  private step = 0;
  private sampler: Promise<TinkerSampler> | undefined;

  private constructor(options: TinkerPolicyOptions, client: TinkerClient, training: TinkerTraining) {
    this.options = options;
    this.client = client;
    this.training = training;
    this.storage = new TinkerStorage(client);
    this.tokenizer = options.chatFormat?.tokenizer ?? options.tokenizer ?? byteTokenizer;
    if (options.chatFormat !== undefined) this.chatFormat = options.chatFormat;
    this.contextWindow = options.contextWindow ?? Infinity;
    this.reduction = options.lossReduction ?? 'sum';
    this.wire = options.wire ?? 'protobuf';
    // SkyRL (the JSON wire) drops AdamParams.grad_clip_norm silently: clipping is offered on protobuf servers only.
    this.capabilities = { valueHead: false, entropy: false, gradientClipping: this.wire === 'protobuf' };
  }

  /** The server's id of the current training run. */
  get modelId(): string {
    return this.training.modelId;
  }

  /** Checks the options (refusing what the server cannot do), connects (client/config, session) and creates the LoRA run. */
  static async create(options: TinkerPolicyOptions): Promise<TinkerPolicy> {
    checkOptions(options);
    const client = new TinkerClient(options);
    try {
      await client.connect();
      const modelId =
        options.modelId ??
        (await client.createModel({ baseModel: options.baseModel, rank: options.rank ?? 8, seed: options.seed ?? 0 }));
      return new TinkerPolicy(options, client, new TinkerTraining(client, modelId, options.wire ?? 'protobuf'));
    } catch (error) {
      client.close();
      throw error;
    }
  }

  /** A policy resumed from `saveState` bytes: a model created from the checkpoint (weights and Adam state). */
  static async restore(options: TinkerPolicyOptions, state: Uint8Array): Promise<TinkerPolicy> {
    checkOptions(options);
    const client = new TinkerClient(options);
    try {
      const record = parseRecord(new TextDecoder().decode(state), '<state>');
      const policy = new TinkerPolicy(options, client, await newTraining(client, options, record.tinkerPath));
      policy.step = record.step;
      return policy;
    } catch (error) {
      client.close();
      throw error;
    }
  }

  /**
   * The KL / DPO reference (cookbook: a sampling client, not a training run). Without `state`: the
   * base model. With `saveState` bytes: a model created from them, its weights saved once for
   * sampling (kept until the reference closes; no TTL, a run may outlast one), the model unloaded.
   */
  static async reference(options: TinkerPolicyOptions, state?: Uint8Array): Promise<TinkerReference> {
    checkOptions(options);
    const client = new TinkerClient(options);
    try {
      await client.connect();
      if (state === undefined) return TinkerReference.onClient(client, { baseModel: options.baseModel }, options);
      const record = parseRecord(new TextDecoder().decode(state), '<state>');
      const training = await newTraining(client, options, record.tinkerPath);
      const path = await training.save('sampler_weights', `agentrl-reference-${Date.now().toString(36)}`, undefined);
      // The model stays loaded until the reference closes: SkyRL 0.3.0 samples a model_path only while its model is loaded.
      return TinkerReference.onClient(
        client,
        { modelPath: path },
        { ...options, owned: path, ownedModel: training.modelId },
      );
    } catch (error) {
      client.close();
      throw error;
    }
  }

  async generate(request: GenerateRequest): Promise<Generation> {
    const generations = await this.generateBatch([request]);
    const [generation] = generations;
    if (generation === undefined) throw new InvalidArgumentError('generateBatch returned nothing for one request', {});
    return generation;
  }

  async generateBatch(requests: readonly GenerateRequest[]): Promise<Generation[]> {
    if (requests.length === 0) return [];
    const sampler = await this.currentSampler();
    const started = performance.now();
    try {
      return await sampleBatch(sampler, requests, {
        tokenizer: this.tokenizer,
        contextWindow: this.contextWindow,
        concurrency: this.options.concurrency ?? 16,
      });
    } finally {
      this.times.sample += performance.now() - started;
    }
  }

  async logprobs(batch: TokenBatch): Promise<Float32Array[]> {
    checkTemperature(batch.temperature, 'logprobs');
    if (batch.sequences.length === 0) return [];
    const started = performance.now();
    try {
      return await scoreSequences(this.training, batch.sequences);
    } finally {
      this.times.forward += performance.now() - started;
    }
  }

  async forwardBackward(batch: TokenBatch, loss: TokenLoss): Promise<LossReport> {
    const { report } = await this.submitForwardBackward(batch, loss);
    return await report;
  }

  /** Sends forward_backward (after a forward when needed); resolves once it is accepted, with its pending report. */
  private async submitForwardBackward(batch: TokenBatch, loss: TokenLoss): Promise<{ report: Promise<LossReport> }> {
    checkTemperature(batch.temperature, 'forwardBackward');
    const started = performance.now();
    const { report } = await submitLoss(this.training, batch.sequences, loss, this.reduction, (ms) => {
      this.times.forward += ms;
    });
    const timed = report.finally(() => {
      this.times.forwardBackward += performance.now() - started;
    });
    timed.catch(() => undefined);
    return { report: timed };
  }

  async optimStep(options: OptimOptions): Promise<OptimReport> {
    return this.sendOptimStep(options);
  }

  /** forward_backward and optim_step pipelined: optim_step is sent before forward_backward's result is read. */
  async trainStep(batch: TokenBatch, loss: TokenLoss, options: OptimOptions): Promise<StepReport> {
    const { report } = await this.submitForwardBackward(batch, loss);
    const optim = this.sendOptimStep(options);
    const [lossReport, optimReport] = await Promise.all([report, optim]);
    return { ...lossReport, ...optimReport };
  }

  private async sendOptimStep(options: OptimOptions): Promise<OptimReport> {
    const maxGradNorm = options.maxGradNorm ?? 0;
    if (maxGradNorm !== 0 && !this.capabilities.gradientClipping)
      throw new InvalidArgumentError(
        `the '${this.wire}' Tinker wire (SkyRL) ignores grad_clip_norm; set maxGradNorm to 0 or use a protobuf (SDK 0.38) server, got ${maxGradNorm}`,
        { maxGradNorm },
      );
    const adam = {
      learning_rate: options.learningRate,
      beta1: options.beta1 ?? 0.9,
      beta2: options.beta2 ?? 0.95,
      eps: options.epsilon ?? this.options.epsilon ?? 1e-8,
      weight_decay: options.weightDecay ?? 0,
      grad_clip_norm: maxGradNorm,
    };
    const started = performance.now();
    let metrics: Record<string, unknown>;
    const sent = this.training.optimStep(adam);
    // The sampler weights go stale as soon as the step is sent.
    this.sampler = undefined;
    try {
      metrics = await sent;
    } finally {
      this.times.optimStep += performance.now() - started;
    }
    this.step += 1;
    return { gradNorm: reportedGradNorm(metrics), step: this.step };
  }

  /**
   * The `tinker://…/sampler_weights/…` path of the current weights, saved once per optimizer step
   * with `samplerTtlSeconds`; the previous step's are deleted (a trainer may call it early to overlap).
   */
  async samplerWeights(): Promise<string> {
    return (await this.currentSampler()).target.modelPath;
  }

  private currentSampler(): Promise<TinkerSampler & { target: { modelPath: string } }> {
    this.sampler ??= (async () => {
      const started = performance.now();
      try {
        const ttl = this.options.samplerTtlSeconds ?? 3600;
        const path = await this.training.save(
          'sampler_weights',
          `agentrl-step-${this.step}-${Date.now().toString(36)}`,
          ttl,
        );
        this.storage.record({ path, kind: 'sampler_weights', ttlSeconds: ttl });
        await this.storage.dropStaleSamplers(path);
        return new TinkerSampler(this.client, { modelPath: path });
      } finally {
        this.times.samplerSync += performance.now() - started;
      }
    })();
    const sampler = this.sampler;
    sampler.catch(() => {
      if (this.sampler === sampler) this.sampler = undefined;
    });
    return sampler as Promise<TinkerSampler & { target: { modelPath: string } }>;
  }

  /** Saves the training state on the server and writes `<path>/tinker-checkpoint.json` pointing at it. */
  async save(path: string): Promise<void> {
    const record = await this.saveRecord();
    await mkdir(path, { recursive: true });
    await writeFile(join(path, 'tinker-checkpoint.json'), `${JSON.stringify(record, null, 2)}\n`);
  }

  /** Continues from what a `save` wrote: a fresh model created from that checkpoint replaces this one. */
  async load(path: string): Promise<void> {
    const file = join(path, 'tinker-checkpoint.json');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new CheckpointError(`${file} is not a Tinker checkpoint record (${(error as Error).message})`, { file });
    }
    await this.replaceModel(parseRecord(text, file));
  }

  /** The resumable state (contract): the checkpoint record of a `save_weights` (weights and Adam state stay on the server). */
  async saveState(): Promise<Uint8Array> {
    return new TextEncoder().encode(JSON.stringify(await this.saveRecord()));
  }

  async loadState(state: Uint8Array): Promise<void> {
    await this.replaceModel(parseRecord(new TextDecoder().decode(state), '<state>'));
  }

  private async saveRecord(): Promise<Record<string, unknown>> {
    const ttl = this.options.checkpointTtlSeconds;
    const tinkerPath = await this.training.save('weights', `agentrl-step-${this.step}-${Date.now().toString(36)}`, ttl);
    this.storage.record({ path: tinkerPath, kind: 'weights', ttlSeconds: ttl });
    return {
      format: 'agentrl-tinker-checkpoint',
      baseUrl: this.client.baseUrl,
      baseModel: this.options.baseModel,
      modelId: this.modelId,
      tinkerPath,
      step: this.step,
    };
  }

  private async replaceModel(record: CheckpointRecord): Promise<void> {
    const previous = this.modelId;
    this.training = await newTraining(this.client, this.options, record.tinkerPath);
    this.step = record.step;
    this.sampler = undefined;
    await this.unload(previous).catch(() => undefined);
  }

  private async unload(modelId: string): Promise<void> {
    await this.client.submit(
      '/api/v1/unload_model',
      { body: { model_id: modelId, type: 'unload_model' } },
      'UnloadModel',
    );
  }

  /**
   * Frees the LoRA run on the server (`unload_model`; a server holds few at once) and stops the
   * heartbeat. `{ unload: false }` keeps the run (and its sampler weights) for another client.
   */
  async close({ unload = true }: { unload?: boolean } = {}): Promise<void> {
    try {
      if (unload) await this.unload(this.modelId);
    } finally {
      this.client.close();
    }
  }
}

function parseRecord(text: string, file: string): CheckpointRecord {
  let record: { tinkerPath?: unknown; step?: unknown };
  try {
    record = JSON.parse(text) as typeof record;
  } catch (error) {
    throw new CheckpointError(`${file} is not a Tinker checkpoint record (${(error as Error).message})`, { file });
  }
  if (typeof record.tinkerPath !== 'string') throw new CheckpointError(`${file} has no tinkerPath`, { file });
  return { tinkerPath: record.tinkerPath, step: typeof record.step === 'number' ? record.step : 0 };
}

/**
 * A model holding a checkpoint's weights and Adam state. Protobuf (SDK 0.38) servers: created by
 * `load_weights` as its first request. JSON servers (SkyRL 0.3.0, no create-via-load): the SDK's
 * legacy addressing, create_model then `load_weights { model_id, seq_id: 1, path, optimizer }`.
 */
async function newTraining(client: TinkerClient, options: TinkerPolicyOptions, path: string): Promise<TinkerTraining> {
  const wire = options.wire ?? 'protobuf';
  if (wire === 'protobuf') {
    const modelId = await client.createModelFromCheckpoint({ path, optimizer: true });
    return new TinkerTraining(client, modelId, wire, 1);
  }
  const modelId = await client.createModel({
    baseModel: options.baseModel,
    rank: options.rank ?? 8,
    seed: options.seed ?? 0,
  });
  const training = new TinkerTraining(client, modelId, wire, 1);
  await client.submit(
    '/api/v1/load_weights',
    { body: { model_id: modelId, seq_id: training.reserve(), path, optimizer: true, type: 'load_weights' } },
    'LoadWeights',
  );
  return training;
}
