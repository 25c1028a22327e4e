/**
 * `TransformerModel`: the built-in policy's weights, LoRA adapters and AdamW moments, on
 * onnxruntime — the one in-process engine (issue 28). The host holds each array once; the
 * engine's sessions read them:
 *
 *   training (onnx/onnx-trainer.ts): forward + backward graphs with the weights (and adapters,
 *     dropout masks) as inputs — onnxruntime holds no copy and needs no new session after a step;
 *     the loss is a pure JS function of per-token log-probs (core/loss.ts) whose gradient the
 *     backward graph back-propagates as the surrogate Σ g_t · logπ(token_t) (+ values, entropies);
 *     AdamW with global-norm clipping on the host, in place;
 *   scoring: the trainer's scoring session (weights as inputs);
 *   generation (generate.ts): an `OnnxInference` session with the weights as initializers (ORT
 *     pre-packs them for the per-token matmuls: one copy inside ORT), made on first use and
 *     refreshed lazily after the weights change — new adapters under LoRA (no new session), new
 *     weights otherwise (a new session).
 *
 * `baseQuantization` ('int8', 'int4'; ModelOptions) quantizes the generation session's base only;
 * scoring and training read the float32 weights.
 *
 * One frozen base, several adapters (`forkAdapters`): a LoRA model's forks share its host weights
 * (the same arrays, no copy) and its generation session (shared-base.ts), each with its own
 * adapters, AdamW moments and dropout RNG — a multi-agent env's roles as adapters over one base.
 *
 * Memory: the host holds the weights once (plus, under full fine-tuning, the gradient accumulator
 * and two AdamW moments of the same size; under LoRA those are the adapters' size). Feeds are not
 * copied by onnxruntime-node (a 256 MB input ran at the process's 378 MB peak), so the training and
 * scoring sessions add only their activations; the generation session holds one copy of the weights
 * (its initializers). Building that session serialises the graph: a transient second copy.
 *
 *   const model = await TransformerModel.create({ vocabSize: 272 }, { seed: 1, lora: { rank: 8 } });
 *   const report = await model.trainStep(sequences, sftLoss(mask), { learningRate: 1e-3 });
 *   const rows = await generate(model, prompts, { maxNewTokens: 32 });
 *
 * Same seed, same initial numbers as the previous engine's model (params.ts, lora.ts): checkpoints and tests keep their values.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import type { TokenLoss } from '../core/loss.ts';
import {
  checkAttentionShape,
  modelConfigSchema,
  type HostParams,
  type ModelConfig,
  type ModelConfigInput,
} from '../model/config.ts';
import { saveAdapter, type SaveAdapterOptions } from '../model/lora-peft.ts';
import type { LoraConfig, LoraConfigInput } from '../model/lora.ts';
import { scoreTokenBudgetFor, trainTokenBudgetFor } from '../model/micro-batches.ts';
import {
  baseQuantizations,
  type BackwardOptions,
  type BaseQuantization,
  type LossReport,
  type ModelOptions,
  type ScoreOptions,
  type ScoreResult,
  type StepReport,
} from '../model/model-options.ts';
import type { OptimOptions } from '../model/optim-options.ts';
import { checkHostParams, initHostParams } from '../model/params.ts';
import { checkOptimizerState, loraSetup, type LoraSetup } from '../model/trained-arrays.ts';
import { checkByShapes, loraShapes } from '../model/lora.ts';
import { engineThreads } from './engine-threads.ts';
import type { OnnxInference, OnnxInferenceOptions } from './onnx/onnx-inference.ts';
import { copyParams } from './onnx/host-params.ts';
import { OnnxTrainer } from './onnx/onnx-trainer.ts';
import type { OnnxTrainerOptions } from './onnx/train-runs.ts';
import { inferenceOptionsKey, SharedBase } from './shared-base.ts';

export type * from '../model/model-options.ts';

export class TransformerModel {
  readonly config: ModelConfig;
  /** LoRA settings when the model trains adapters (the weights are then frozen). */
  readonly lora: LoraConfig | null;
  private readonly trainer: OnnxTrainer;
  /** Shared with the trainer: the budgets below write into it. */
  private readonly trainerOptions: OnnxTrainerOptions;
  /** The weights, shared with this model's forks (and its generation sessions). */
  private base: SharedBase;
  /** This model's generation inference: on `base`'s session for `options`, with its own adapters. */
  private generation: { base: SharedBase; options: OnnxInferenceOptions; inference: Promise<OnnxInference> } | null =
    null;
  /** ORT intra-op threads of every session (engine-threads.ts: AGENTRL_THREADS, else ORT's choice). */
  private readonly threads: number | undefined;
  /** The base's matmuls in generation (ModelOptions); scoring and training read the float32 weights. */
  readonly baseQuantization: BaseQuantization;
  /** What changed since the inference session last saw the arrays. */
  private stale = { weights: false, adapters: false };

  private constructor(
    config: ModelConfig,
    base: SharedBase,
    lora: LoraSetup | null,
    baseQuantization: BaseQuantization = 'float32',
  ) {
    if (!baseQuantizations.includes(baseQuantization))
      throw new InvalidArgumentError(
        `baseQuantization must be one of ${baseQuantizations.join(', ')}; got ${String(baseQuantization)}`,
        { baseQuantization },
      );
    this.baseQuantization = baseQuantization;
    const params = base.weights;
    checkHostParams(config, params);
    checkAttentionShape(config);
    this.config = config;
    this.lora = lora?.config ?? null;
    this.base = base;
    this.threads = engineThreads();
    this.trainerOptions = {
      trainTokenBudget: trainTokenBudgetFor(config),
      scoreTokenBudget: scoreTokenBudgetFor(config),
      threads: this.threads,
    };
    this.trainer = OnnxTrainer.create({
      config,
      params,
      lora: this.lora,
      adapters: lora?.adapters,
      dropoutSeed: lora?.seed ?? 0,
      options: this.trainerOptions,
    });
  }

  /** A freshly initialised model (params.ts's seeded init; LoRA adapters from lora.ts's, on their own stream). */
  static async create(config: ModelConfigInput = {}, options: ModelOptions = {}): Promise<TransformerModel> {
    const parsed = modelConfigSchema.parse(config);
    const seed = options.seed ?? 0;
    const lora = loraSetup(parsed, options.lora, seed);
    return new TransformerModel(
      parsed,
      new SharedBase(parsed, initHostParams(parsed, seed), lora?.config ?? null),
      lora,
      options.baseQuantization,
    );
  }

  /** A model from host parameters (copied: a checkpoint); with `lora`, fresh adapters on them (or copies of the given ones). */
  static async fromParams(
    config: ModelConfigInput,
    params: HostParams,
    options: {
      seed?: number;
      lora?: LoraConfigInput;
      adapters?: HostParams;
      baseQuantization?: BaseQuantization;
    } = {},
  ): Promise<TransformerModel> {
    const parsed = modelConfigSchema.parse(config);
    checkHostParams(parsed, params);
    const lora = loraSetup(parsed, options.lora, options.seed ?? 0);
    if (lora !== null && options.adapters !== undefined) lora.adapters = copyParams(options.adapters);
    const base = new SharedBase(parsed, copyParams(params), lora?.config ?? null);
    return new TransformerModel(parsed, base, lora, options.baseQuantization);
  }

  /**
   * A model over the SAME frozen base (the host arrays, not a copy) and the same generation
   * session, with its own LoRA adapters (`adapters`, copied, or fresh ones from `seed`, default 0,
   * as `create` draws them), its own AdamW moments and its own dropout RNG. Training a fork never
   * changes another's outputs; the base stays bit-identical (a base with forks refuses `setParams`).
   * LoRA models only. Budgets and threads start at the defaults; `baseQuantization` is the parent's.
   *
   * Memory (SmolLM2-135M's shape, random weights, rank-8 LoRA: 513 MB base, 9.3 MB adapters; each
   * model generates once): peak RSS 2181 MB for the model alone, 2008 MB with 3 forks, 2101 MB
   * with 7; 3 `fromParams` copies instead of forks peaked at 6325 MB. One train step per model adds
   * its training sessions' activations (3 forks + parent: 1869 MB after, peak 2112 MB). Peak =
   * process.resourceUsage().maxRSS of one process per case, each model generating 4 tokens.
   */
  async forkAdapters({ seed = 0, adapters }: { seed?: number; adapters?: HostParams } = {}): Promise<TransformerModel> {
    if (this.lora === null)
      throw new InvalidArgumentError(
        'forkAdapters: the model trains its full weights; only a LoRA model (create it with lora: { rank, … }) can fork adapters over a frozen base',
      );
    const setup = loraSetup(this.config, this.lora, seed)!;
    if (adapters !== undefined) {
      checkByShapes(loraShapes(this.config, this.lora), adapters, 'forkAdapters adapters');
      setup.adapters = copyParams(adapters);
    }
    this.base.forked = true;
    return new TransformerModel(this.config, this.base, setup, this.baseQuantization);
  }

  /** Optimizer steps taken. */
  get step(): number {
    return this.trainer.step;
  }

  /** Padded tokens per training run; larger batches are split and accumulated exactly. */
  get trainTokenBudget(): number {
    return this.trainerOptions.trainTokenBudget ?? trainTokenBudgetFor(this.config);
  }
  set trainTokenBudget(tokens: number) {
    this.trainerOptions.trainTokenBudget = positiveBudget(tokens, 'trainTokenBudget');
  }

  /** Padded tokens per scoring run. */
  get scoreTokenBudget(): number {
    return this.trainerOptions.scoreTokenBudget ?? scoreTokenBudgetFor(this.config);
  }
  set scoreTokenBudget(tokens: number) {
    this.trainerOptions.scoreTokenBudget = positiveBudget(tokens, 'scoreTokenBudget');
  }

  /** Copies the weights to the host; under LoRA, merged (W + α/r · A B), as export and serving need. */
  async hostParams(): Promise<HostParams> {
    return this.trainer.mergedParams();
  }

  /** The frozen base weights (the weights themselves without LoRA), copied. */
  async baseParams(): Promise<HostParams> {
    return copyParams(this.trainer.weightsView());
  }

  /** The LoRA adapters on the host (`layers.{i}.{weight}.loraA` [in, r], `.loraB` [r, out]), copied. */
  async adapterParams(): Promise<HostParams> {
    return this.trainer.adapterParams();
  }

  /**
   * Under LoRA with a value head: the trained value head (`valueHead.w` [D, 1], `valueHead.b` [1];
   * PEFT's `modules_to_save`), copied; else null (under full fine-tuning it is among `hostParams`).
   */
  async valueHeadParams(): Promise<HostParams | null> {
    return this.trainer.valueHeadParams();
  }

  /** Replaces the trained value head under LoRA (from a saved state); copied. */
  setValueHead(valueHead: HostParams): void {
    this.trainer.setValueHead(copyParams(valueHead));
  }

  /** Writes the adapters in PEFT's layout (lora-peft.ts): adapter_config.json + adapter_model.safetensors. */
  async saveAdapter(folder: string, options: { baseModelNameOrPath?: string } = {}): Promise<void> {
    await saveAdapter(folder, this.peftAdapter(options));
  }

  /** What a PEFT adapter folder holds (lora-peft.ts `adapterFiles` / `saveAdapter`): the adapters, a trained value head. */
  peftAdapter({ baseModelNameOrPath }: { baseModelNameOrPath?: string } = {}): SaveAdapterOptions {
    if (this.lora === null)
      throw new InvalidArgumentError('saveAdapter: the model has no LoRA adapters (create it with lora: { rank, … })');
    const valueHead = this.trainer.valueHeadParams() ?? undefined;
    return { lora: this.lora, adapters: this.trainer.adapterParams(), valueHead, baseModelNameOrPath };
  }

  /** Copies the optimizer moments to the host (for resumable checkpoints); under LoRA, the adapters' and the value head's. */
  async optimizerState(): Promise<{ step: number; m: HostParams; v: HostParams }> {
    return this.trainer.optimizerState();
  }

  /**
   * Restores AdamW moments and the step counter. Under LoRA with a value head, a state without the
   * head's moments (saved before the head trained under LoRA) restores with fresh ones for it, and
   * a warning when the state had taken steps (AGENTRL_STATE_WITHOUT_VALUE_HEAD).
   */
  loadOptimizerState(state: { step: number; m: HostParams; v: HostParams }): void {
    const complete = withValueHeadMoments(this.trainer.valueHeadParams(), state);
    checkOptimizerState(this.config, this.lora, this.trainer.shapes, complete);
    this.trainer.loadOptimizerState(complete);
  }

  /** Replaces the weights (e.g. from a checkpoint or a reference copy); copied. */
  setParams(params: HostParams): void {
    checkHostParams(this.config, params);
    if (this.base.forked)
      throw new InvalidArgumentError(
        'setParams: this base is shared with forked adapters (forkAdapters) and frozen; make a new model with TransformerModel.fromParams',
      );
    this.trainer.setParams(copyParams(params));
    this.base = new SharedBase(this.config, this.trainer.weightsView(), this.lora);
    this.stale.weights = true;
  }

  /** Replaces the LoRA adapters (from a saved state); copied. */
  setAdapters(adapters: HostParams): void {
    if (this.lora === null) throw new InvalidArgumentError('setAdapters: the model has no LoRA adapters');
    this.trainer.setAdapters(copyParams(adapters));
    this.stale.adapters = true;
  }

  /**
   * The generation session with the current weights: made on first use, refreshed after they
   * changed. `options` (threads, quantization, budgets) made it; other `options` make a new one,
   * none keep the current one (generate.ts passes none). Forks with the same options run one
   * session (shared-base.ts).
   */
  async inferenceSession(options?: OnnxInferenceOptions): Promise<OnnxInference> {
    const current = this.generation;
    const wanted =
      options === undefined && current !== null
        ? current.options
        : { threads: this.threads, baseQuantization: this.baseQuantization, ...(options ?? {}) };
    const sameOptions = current !== null && inferenceOptionsKey(current.options) === inferenceOptionsKey(wanted);
    if (current !== null && (!sameOptions || this.stale.weights)) await this.leaveGeneration();
    if (this.generation === null) {
      this.stale = { weights: false, adapters: false };
      const inference = this.base.acquire(wanted, this.trainer.adaptersView() ?? undefined);
      this.generation = { base: this.base, options: wanted, inference };
      return inference;
    }
    const inference = await this.generation.inference;
    if (this.stale.adapters) {
      this.stale.adapters = false;
      await inference.refresh({ adapters: this.trainer.adaptersView() ?? undefined });
    }
    return inference;
  }

  /** Lets go of this model's generation inference (its session goes with the base's last user of it). */
  private async leaveGeneration(): Promise<void> {
    const generation = this.generation;
    if (generation === null) return;
    this.generation = null;
    const inference = await generation.inference.catch(() => null); // a failed creation holds nothing
    if (inference !== null) await generation.base.leave(generation.options, inference);
  }

  /** The arrays an optimizer step changed: the adapters under LoRA, else the weights. */
  private markTrained(): void {
    if (this.lora === null) this.stale.weights = true;
    else this.stale.adapters = true;
  }

  /** Per-token log-probs (and entropies, values) of given sequences; index 0 of each row is 0. */
  async score(sequences: readonly ArrayLike<number>[], options: ScoreOptions = {}): Promise<ScoreResult> {
    return this.trainer.score(sequences, options);
  }

  /**
   * Forward + loss + backward; gradients are added to an accumulator until `optimStep`.
   * Sequences longer than the context window are rejected (the rollout decides how to cut).
   */
  forwardBackward(
    sequences: readonly ArrayLike<number>[],
    loss: TokenLoss,
    { temperature = 1 }: BackwardOptions = {},
  ): Promise<LossReport> {
    return this.trainer.forwardBackward(sequences, loss, { temperature });
  }

  /** The gradient accumulated by `forwardBackward` so far, on the host (for inspection and tests). */
  async accumulatedGradients(): Promise<HostParams> {
    return this.trainer.accumulatedGradients();
  }

  /** Drops accumulated gradients without a step. */
  zeroGradients(): void {
    this.trainer.zeroGradients();
  }

  /** Clips the accumulated gradient, applies AdamW and clears the accumulator. */
  async optimStep(options: OptimOptions): Promise<{ gradNorm: number; step: number }> {
    const report = this.trainer.optimStep(options);
    this.markTrained();
    return report;
  }

  /** One optimizer step on one batch: forwardBackward + optimStep. */
  async trainStep(
    sequences: readonly ArrayLike<number>[],
    loss: TokenLoss,
    options: OptimOptions & BackwardOptions,
  ): Promise<StepReport> {
    const report = await this.trainer.trainStep(sequences, loss, options);
    this.markTrained();
    return report;
  }

  /**
   * Releases this model's onnxruntime sessions (the host arrays stay readable; a later call makes
   * them again). A generation session shared with forks stays until the last of them lets go.
   */
  async release(): Promise<void> {
    await this.trainer.release();
    await this.leaveGeneration();
  }
}

function positiveBudget(tokens: number, name: string): number {
  if (!(Number.isInteger(tokens) && tokens > 0))
    throw new InvalidArgumentError(`${name} must be a positive integer, got ${tokens}`, { [name]: tokens });
  return tokens;
}

/** `state` with zero moments for a LoRA value head it lacks in both m and v (an older state), else `state` itself. */
function withValueHeadMoments(
  valueHead: HostParams | null,
  state: { step: number; m: HostParams; v: HostParams },
): { step: number; m: HostParams; v: HostParams } {
  if (valueHead === null) return state;
  const names = [...valueHead.keys()];
  if (names.some((name) => state.m.has(name) || state.v.has(name))) return state;
  if (state.step > 0)
    process.emitWarning(
      `optimizer state from step ${state.step} has no moments for the LoRA value head (saved before it trained under LoRA): its AdamW moments start fresh`,
      { code: 'AGENTRL_STATE_WITHOUT_VALUE_HEAD' },
    );
  const zeros = (): HostParams =>
    new Map([...valueHead].map(([name, t]) => [name, { shape: [...t.shape], data: new Float32Array(t.data.length) }]));
  return { step: state.step, m: new Map([...state.m, ...zeros()]), v: new Map([...state.v, ...zeros()]) };
}
