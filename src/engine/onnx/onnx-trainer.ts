/**
 * `OnnxTrainer`: the built-in model's train step on onnxruntime, for LoRA (adapters on frozen
 * weights, with adapter dropout) and for full fine-tuning (every weight: embedding, tied or
 * separate head, norms, Qwen2 biases, Qwen3 q/k norms, the value head):
 *
 *   1. a forward run per micro-batch gives this policy's log-probs, entropies and values, which a
 *      loss that reads the current policy (PPO, GRPO, KL, entropy: `dependsOnCurrent`) needs,
 *      and, when the whole batch's fit micro-batches.ts's TRAIN_KEPT_ACTIVATION_BUDGET (or it is
 *      one run), the activations the backward reads;
 *   2. `loss.compute` (pure JS, core/loss.ts) returns its gradient with respect to them;
 *   3. per micro-batch, a backward run on the kept activations and the loss gradient computes the
 *      surrogate Σ ∂L/∂logπ · logπ (+ entropy, value terms) and its gradients with respect to
 *      every trained array (train-graph.ts, autodiff.ts, split-graph.ts); micro-batch gradients
 *      sum exactly (the surrogate is a sum over rows). Without kept activations (a larger batch,
 *      or any under dropout, whose log-probs the loss must not see) each micro-batch is one run of
 *      the unsplit graph on the loss gradient, its activations never leaving onnxruntime
 *      (split-graph.ts `wholeGraph`), with fresh masks per micro-batch (dropout-feeds.ts). A loss
 *      that does not read the policy (SFT: its gradient is known before the forward) skips 1–2
 *      (a tiny GPT SFT step 232 → 158 ms);
 *   4. `optimStep` clips the global norm and applies AdamW on the host (host-adamw.ts), in place.
 *
 *   const trainer = OnnxTrainer.create({ config, params, lora, adapters, dropoutSeed: 1 });
 *   const report = await trainer.trainStep(sequences, rlLoss({ ... }), { learningRate: 1e-4 });
 *
 * The trainer owns the arrays it is given (no copies): the weights, updated in place under full
 * fine-tuning, and the adapters. The graphs take them as inputs, so onnxruntime holds no copy.
 * Under LoRA the value head trains too (PEFT's `modules_to_save`): its own copy, moments, no weight
 * decay; the base stays bit-identical (forks share it); `mergedParams`, `valueHeadParams` carry it.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at, entry } from '../../core/indexing.ts';
import type { TokenLoss, TokenLossOutput } from '../../core/loss.ts';
import { Rng } from '../../core/rng.ts';
import {
  modelConfigSchema,
  parameterShapes,
  type HostParams,
  type ModelConfig,
  type ModelConfigInput,
} from '../../model/config.ts';
import { checkByShapes, loraShapes, mergeLora, type LoraConfig } from '../../model/lora.ts';
import type { LossReport, ScoreResult, StepReport } from '../../model/model-options.ts';
import { scoreTokenBudgetFor } from '../../model/micro-batches.ts';
import type { OptimOptions } from '../../model/optim-options.ts';
import { checkHostParams, decayedNames, parameterNames } from '../../model/params.ts';
import { dropoutFeeds } from './dropout-feeds.ts';
import { accumulateGradients, copyParams, zerosOf } from './host-params.ts';
import { checkOptimOptions, hostClipAndAdamW, type HostAdamState } from './host-adamw.ts';
import type { Feed } from './session.ts';
import { trainedShapes, trainGraphNames, type TrainHeads } from './train-graph.ts';
import { keepsActivations, type OnnxTrainerOptions, type RunRows, runFeeds, trainingRuns } from './train-runs.ts';
import { ScoredRows } from './scored-rows.ts';
import { pick, trainedOutputs, TrainSessions, type RunOutputs } from './train-sessions.ts';

export interface OnnxTrainerInput {
  config: ModelConfigInput;
  /** The weights (config.ts names); the trainer owns them from here on (full fine-tuning updates them in place). */
  params: HostParams;
  /** LoRA settings: the adapters train, the weights stay frozen. Null or absent: full fine-tuning. */
  lora?: LoraConfig | null;
  /** The initial adapters under LoRA (lora.ts names); owned from here on. */
  adapters?: HostParams;
  /** Seed of the adapter-dropout masks (LoRA with dropout > 0). */
  dropoutSeed?: number;
  options?: OnnxTrainerOptions;
}

function checkTemperature(temperature: number): void {
  if (!(temperature > 0))
    throw new InvalidArgumentError(`temperature must be > 0, got ${temperature}`, { temperature });
}

export class OnnxTrainer {
  /** Names and shapes of the trained arrays: the weights, or under LoRA the adapters and the value head. */
  readonly shapes: Map<string, number[]>;
  /** The adapters' names and shapes under LoRA, else null. */
  private readonly adapterShapes: Map<string, number[]> | null;
  /** Their canonical order (params.ts): the global-norm sum and every trained map use it. */
  private readonly names: string[];
  private readonly decayed: Set<string>;
  private weights: HostParams;
  private adapters: HostParams | null;
  /** Under LoRA with a value head: the trained value head (its own copy; the base keeps the initial one), else null. */
  private valueHead: HostParams | null = null;
  private adam: HostAdamState;
  private accumulated: HostParams | null = null;
  private readonly sessions: TrainSessions;
  private readonly options: OnnxTrainerOptions;
  private readonly dropoutRng: Rng;
  /** The heads the last loss read: the forward run before the next loss uses that pair's graph. */
  private lastHeads: TrainHeads = { entropy: false, value: false, detachValue: false };

  private constructor(
    readonly config: ModelConfig,
    readonly lora: LoraConfig | null,
    input: OnnxTrainerInput,
  ) {
    checkHostParams(config, input.params);
    this.weights = input.params;
    if (lora === null) {
      this.shapes = parameterShapes(config);
      this.names = parameterNames(config);
      this.decayed = decayedNames(config);
      this.adapters = null;
      this.adapterShapes = null;
    } else {
      this.shapes = trainedShapes(config, lora);
      this.names = [...this.shapes.keys()];
      this.adapterShapes = loraShapes(config, lora);
      // Weight decay on the adapters; the value head is not decayed (as under full fine-tuning).
      this.decayed = new Set(this.adapterShapes.keys());
      if (input.adapters === undefined)
        throw new InvalidArgumentError('OnnxTrainer.create: a LoRA config needs its adapters (initLoraParams)');
      checkByShapes(this.adapterShapes, input.adapters, 'LoRA adapters');
      this.adapters = input.adapters;
      const head = [...this.shapes.keys()].filter((name) => !this.adapterShapes?.has(name));
      if (head.length > 0)
        this.valueHead = copyParams(new Map(head.map((name) => [name, entry(Object.fromEntries(input.params), name)])));
    }
    this.adam = { step: 0, m: zerosOf(this.shapes), v: zerosOf(this.shapes) };
    this.dropoutRng = new Rng(input.dropoutSeed ?? 0);
    this.options = input.options ?? {};
    this.sessions = new TrainSessions(config, lora, this.options);
  }

  static create(input: OnnxTrainerInput): OnnxTrainer {
    return new OnnxTrainer(modelConfigSchema.parse(input.config), input.lora ?? null, input);
  }

  get step(): number {
    return this.adam.step;
  }

  /** The weights themselves (not a copy: read, do not write). */
  weightsView(): HostParams {
    return this.weights;
  }

  /** The adapters themselves under LoRA (not a copy), else null. */
  adaptersView(): HostParams | null {
    return this.adapters;
  }

  /** A copy of the adapters (LoRA only). */
  adapterParams(): HostParams {
    if (this.adapters === null)
      throw new InvalidArgumentError(
        'adapterParams: the model has no LoRA adapters (create it with lora: { rank, … })',
      );
    return copyParams(this.adapters);
  }

  /** The weights with the adapters folded in under LoRA (W + α/r · A B) and the trained value head, else a copy of the weights: export, serving. */
  mergedParams(): HostParams {
    if (this.lora === null || this.adapters === null) return copyParams(this.weights);
    const merged = mergeLora(this.weights, this.adapters, this.lora);
    // mergeLora shares the arrays it does not adapt: copy those, so the caller owns every one.
    for (const [name, tensor] of merged)
      if (tensor === this.weights.get(name)) merged.set(name, { shape: [...tensor.shape], data: tensor.data.slice() });
    for (const [name, tensor] of copyParams(this.valueHead ?? new Map())) merged.set(name, tensor);
    return merged;
  }

  /** Under LoRA with a value head: a copy of the trained value head (`valueHead.w`, `valueHead.b`), else null. */
  valueHeadParams(): HostParams | null {
    return this.valueHead === null ? null : copyParams(this.valueHead);
  }

  /** Replaces the trained value head under LoRA (owned from here on; from a saved state). */
  setValueHead(valueHead: HostParams): void {
    if (this.valueHead === null)
      throw new InvalidArgumentError('setValueHead: only a LoRA model with a value head trains one apart');
    checkByShapes(new Map([...this.shapes].filter(([name]) => this.valueHead?.has(name))), valueHead, 'value head');
    this.valueHead = valueHead;
  }

  /** Replaces the weights (owned from here on). */
  setParams(params: HostParams): void {
    checkHostParams(this.config, params);
    this.weights = params;
  }

  /** Replaces the adapters (owned from here on). */
  setAdapters(adapters: HostParams): void {
    if (this.adapters === null || this.adapterShapes === null)
      throw new InvalidArgumentError('setAdapters: the model has no LoRA adapters');
    checkByShapes(this.adapterShapes, adapters, 'LoRA adapters');
    this.adapters = adapters;
  }

  /** The AdamW moments (copies) and the step count. */
  optimizerState(): HostAdamState {
    return { step: this.adam.step, m: copyParams(this.adam.m), v: copyParams(this.adam.v) };
  }

  loadOptimizerState(state: HostAdamState): void {
    checkByShapes(this.shapes, state.m, 'optimizer state (first moments)');
    checkByShapes(this.shapes, state.v, 'optimizer state (second moments)');
    this.adam = { step: state.step, m: copyParams(state.m), v: copyParams(state.v) };
  }

  /** The trained arrays: the weights, or the adapters and the value head (the maps AdamW replaces them in). */
  private trained(): HostParams[] {
    if (this.adapters === null) return [this.weights];
    return this.valueHead === null ? [this.adapters] : [this.adapters, this.valueHead];
  }

  /** The arrays every run feeds: the weights, and under LoRA the adapters and the trained value head (fed after the weights: its feeds win). */
  private arrays(): HostParams[] {
    return this.adapters === null ? [this.weights] : [this.weights, ...this.trained()];
  }

  private feeds(run: RunRows, temperature: number, rng: Rng | null): Record<string, Feed> {
    const feeds = runFeeds(run, temperature, this.config, this.arrays());
    Object.assign(feeds, dropoutFeeds(this.config, this.lora, run.packed.rows, run.packed.length, rng));
    return feeds;
  }

  /**
   * Per-token log-probs (entropies, values) of the current weights, without dropout (TransformerModel.score's shapes);
   * with `lossMask`, at its nonzero positions only (0 elsewhere).
   */
  async score(
    sequences: readonly ArrayLike<number>[],
    {
      temperature = 1,
      entropies = false,
      lossMask,
    }: { temperature?: number; entropies?: boolean; lossMask?: readonly ArrayLike<number>[] } = {},
  ): Promise<ScoreResult> {
    checkTemperature(temperature);
    const session = await this.sessions.scorer();
    const fetches = ['target_logprobs'];
    if (entropies) fetches.push(trainGraphNames.entropies);
    if (this.config.valueHead) fetches.push('values');
    const collected = new ScoredRows(sequences, entropies, this.config.valueHead);
    const budgets = { trainTokenBudget: this.options.scoreTokenBudget ?? scoreTokenBudgetFor(this.config) };
    for (const run of trainingRuns(sequences, this.config, { ...this.options, ...budgets }, lossMask)) {
      collected.add(run, await session.run(pick(this.feeds(run, temperature, null), session.inputNames), fetches));
    }
    return collected.result;
  }

  /** Forward + loss + backward; gradients add to an accumulator until `optimStep`. */
  async forwardBackward(
    sequences: readonly ArrayLike<number>[],
    loss: TokenLoss,
    { temperature = 1 }: { temperature?: number } = {},
  ): Promise<LossReport> {
    checkTemperature(temperature);
    // The heads run only where the loss reads (its lossMask): the rest of a sequence is context.
    const runs = [...trainingRuns(sequences, this.config, this.options, loss.lossMask)];
    let kept: (RunOutputs | null)[] = runs.map(() => null);
    let output: TokenLossOutput;
    let keep = false;
    if (loss.dependsOnCurrent) {
      const heads = this.lastHeads;
      const scored = new ScoredRows(sequences, true, this.config.valueHead);
      keep = keepsActivations(runs, this.config, this.lora, this.options.keptActivationBudget);
      const pair = keep ? await this.sessions.pair(heads) : null;
      for (const [index, run] of runs.entries()) {
        const feeds = this.feeds(run, temperature, null);
        const out = pair === null ? await this.sessions.scoreRun(feeds) : await this.sessions.forward(pair, feeds);
        scored.add(run, out);
        if (pair !== null) kept[index] = out;
      }
      output = loss.compute(scored.result);
      this.lastHeads = this.headsFor(loss, output);
      const same = (Object.keys(heads) as (keyof TrainHeads)[]).every((key) => heads[key] === this.lastHeads[key]);
      if (!same) kept = runs.map(() => null);
    } else {
      output = loss.compute({ logprobs: sequences.map((s) => new Float32Array(s.length)) });
      this.lastHeads = this.headsFor(loss, output);
    }
    const { surrogate, logprobs } = await this.accumulate(runs, { keep, kept }, output, sequences, temperature);
    let tokens = 0;
    for (const g of output.gradLogprobs) for (let t = 0; t < g.length; t++) if (g[t] !== 0) tokens++;
    if (loss.dependsOnCurrent) return { ...output, tokens };
    // A loss whose gradient ignores the policy is linear in the log-probs: the surrogate Σ g·logπ is
    // its value (SFT: the NLL). Its metrics come from the log-probs the backward ran on (computed
    // first on zeros, they read 0).
    return { ...output, loss: surrogate, metrics: loss.compute({ logprobs }).metrics, tokens };
  }

  private headsFor(loss: TokenLoss, output: TokenLossOutput): TrainHeads {
    if (output.gradValues !== undefined && !this.config.valueHead) {
      throw new InvalidArgumentError(
        `loss "${loss.name}" trains a value head, but the model has none (set valueHead: true)`,
      );
    }
    const value = output.gradValues !== undefined;
    return { entropy: output.gradEntropies !== undefined, value, detachValue: value && loss.detachValueHead === true };
  }

  /**
   * Backward runs into the accumulator; returns Σ surrogate and the log-probs the runs gave. A
   * batch that `keep`s runs the backward on each run's kept activations (the forward again on the
   * pair, where the loss asked for other heads than the kept runs carry: the same graphs, so a
   * resumed run steps bit for bit as one never stopped); any other batch runs each run as one
   * forward + backward session on the cotangents the loss gave, its activations never leaving
   * onnxruntime.
   */
  private async accumulate(
    runs: readonly RunRows[],
    { keep, kept }: { keep: boolean; kept: (RunOutputs | null)[] },
    output: TokenLossOutput,
    sequences: readonly ArrayLike<number>[],
    temperature: number,
  ): Promise<{ surrogate: number; logprobs: Float32Array[] }> {
    const heads = this.lastHeads;
    const pair = keep ? await this.sessions.pair(heads) : null;
    const scored = new ScoredRows(sequences, false, false);
    const dropout = this.lora !== null && this.lora.dropout > 0;
    let maskedBatch: RunRows['packed'] | null = null;
    let masks: Record<string, Feed> = {};
    let total = 0;
    for (const [index, run] of runs.entries()) {
      const feeds = runFeeds(run, temperature, this.config, this.arrays());
      if (dropout) {
        // One draw per packed micro-batch (its head-row runs share the forward).
        if (maskedBatch !== run.packed) {
          maskedBatch = run.packed;
          masks = dropoutFeeds(this.config, this.lora, run.packed.rows, run.packed.length, this.dropoutRng);
        }
        Object.assign(feeds, masks);
      }
      const cotangent = (arrays: Float32Array[]): Feed => ({
        dtype: 'float32',
        shape: [run.slots.length],
        data: Float32Array.from(run.slots, ([row, t]) => at(at(arrays, at(run.indices, row)), t)),
      });
      feeds[trainGraphNames.gradLogprobs] = cotangent(output.gradLogprobs);
      if (heads.entropy && output.gradEntropies) feeds[trainGraphNames.gradEntropies] = cotangent(output.gradEntropies);
      if (heads.value && output.gradValues) feeds[trainGraphNames.gradValues] = cotangent(output.gradValues);
      const forward = kept[index] ?? (pair === null ? null : await this.sessions.forward(pair, feeds));
      kept[index] = null;
      const sessions =
        pair !== null && forward !== null ? { pair, forward } : { whole: await this.sessions.whole(heads) };
      const out = await this.sessions.train(sessions, feeds, this.names);
      scored.add(run, out);
      const { surrogate, gradients } = trainedOutputs(out, this.names);
      total += surrogate;
      this.accumulated = accumulateGradients(this.accumulated, gradients, this.shapes);
    }
    this.accumulated ??= zerosOf(this.shapes);
    return { surrogate: total, logprobs: scored.result.logprobs };
  }

  /** The gradient accumulated so far (a copy). */
  accumulatedGradients(): HostParams {
    if (this.accumulated === null)
      throw new InvalidArgumentError('no accumulated gradients: call forwardBackward() first');
    return copyParams(this.accumulated);
  }

  zeroGradients(): void {
    this.accumulated = null;
  }

  /** Clips the accumulated gradient, applies AdamW to the trained arrays (in place) and clears the accumulator. */
  optimStep(options: OptimOptions): { gradNorm: number; step: number } {
    if (this.accumulated === null)
      throw new InvalidArgumentError('optimStep() called with no gradients: call forwardBackward() first');
    const maps = this.trained();
    const trained = new Map(maps.flatMap((map) => [...map]));
    const gradNorm = hostClipAndAdamW(trained, this.adam, this.accumulated, options, {
      names: this.names,
      decayed: this.decayed,
    });
    // AdamW writes new arrays into the map it is given: back into the map each came from.
    const updated = Object.fromEntries(trained);
    for (const map of maps) for (const name of map.keys()) map.set(name, entry(updated, name));
    this.accumulated = null;
    return { gradNorm, step: this.adam.step };
  }

  /** forwardBackward + optimStep on one batch. */
  async trainStep(
    sequences: readonly ArrayLike<number>[],
    loss: TokenLoss,
    options: OptimOptions & { temperature?: number },
  ): Promise<StepReport> {
    if (this.accumulated !== null)
      throw new InvalidArgumentError('trainStep() with pending accumulated gradients: call optimStep() first');
    checkOptimOptions(options);
    const report = await this.forwardBackward(sequences, loss, { temperature: options.temperature });
    const { gradNorm, step } = this.optimStep(options);
    return { ...report, gradNorm, step };
  }

  async release(): Promise<void> {
    await this.sessions.release();
  }
}
