/**
 * `TransformerModel`: the built-in policy's weights, optimizer state and compiled functions.
 *
 * Training splits the loss from the network (see core/loss.ts): the loss is a pure JS function of
 * per-token log-probs (values, entropies) that returns its gradient; the model back-propagates the
 * surrogate Σ_t g_t · logπ(token_t) (+ values, entropies) into the weights. When the loss gradient
 * does not depend on the current policy (SFT), forward, backward, clipping and AdamW run as one
 * compiled call; otherwise one compiled forward pass comes first.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { TokenLoss, TokenLossOutput } from '../core/loss.ts';
import { Rng } from '../core/rng.ts';
import { checkAttentionShape, modelConfigSchema, type HostParams, type ModelConfig } from './config.ts';
import type { ModelConfigInput } from './config.ts';
import { tree, initJax, readScalar, numpy as np, type JaxArray } from './jax.ts';
import type { DeviceParams } from './transformer.ts';
import { CompiledSteps, type HeadArrays } from './compiled-steps.ts';
import { DeviceBatches } from './device-batch.ts';
import { hyperVector, type AdamState, type OptimOptions } from './adamw.ts';
import { checkHostParams, initHostParams, toDevice, toHost } from './params.ts';
import { fromNextTokenLayout, type PackedBatch } from './batch.ts';
import { HEAD_ELEMENT_BUDGET, SCORE_TOKEN_BUDGET, TRAIN_TOKEN_BUDGET, microBatches } from './micro-batches.ts';
import { TRAIN_HEAD_ELEMENT_BUDGET, tokensPerCall } from './micro-batches.ts';
import { LayerwiseBackward, layerwiseByDefault, type HeadNeeds } from './layerwise-backward.ts';
import { cotangentBatches, headNeeds, trainedTokens, type PreparedMicroBatch } from './backward-inputs.ts';
import { checkOptimizerState, loraSetup, trainedArrays, type LoraSetup } from './trained-arrays.ts';
import { saveAdapter } from './lora-peft.ts';
import { checkByShapes, dropoutMasks, mergeLora, toDeviceByShapes, toHostByShapes } from './lora.ts';
import type { LoraConfig, LoraConfigInput } from './lora.ts';
import type { BackwardOptions, LossReport, ModelOptions, ScoreOptions } from './model-options.ts';
import type { ScoreResult, StepReport } from './model-options.ts';

// Re-exported for bench/real-memory.ts; the other budgets are read from micro-batches.ts.
export { TRAIN_HEAD_ELEMENT_BUDGET, tokensPerCall } from './micro-batches.ts';
export type * from './model-options.ts';

export class TransformerModel {
  readonly config: ModelConfig;
  /** LoRA settings when the model trains adapters (the weights are then frozen). */
  readonly lora: LoraConfig | null;
  private params: DeviceParams;
  /** The adapters under LoRA (the trained arrays), else null. */
  private adapters: DeviceParams | null;
  /** Names and shapes of the trained arrays: the weights, or the adapters under LoRA. */
  private readonly trainableShapes: Map<string, number[]>;
  private readonly loraScaleArray: JaxArray | null;
  private readonly dropoutRng: Rng;
  private adam: AdamState;
  /** Optimizer steps taken. */
  step = 0;
  /** Padded tokens per compiled training call; larger batches are split and accumulated exactly. */
  trainTokenBudget = TRAIN_TOKEN_BUDGET;
  /** Padded tokens per compiled scoring call. */
  scoreTokenBudget = SCORE_TOKEN_BUDGET;
  /**
   * Back-propagate one decoder layer per compiled call (layerwise-backward.ts) instead of the
   * whole model in one: the same gradient to float rounding, within the wasm heap at real sizes.
   * Default: on where one call's buffers would pass 2 GiB (SmolLM2-135M), off for the byte models.
   */
  layerwiseBackward: boolean;
  private readonly layerwise: LayerwiseBackward;
  private readonly decayed: Set<string>;
  /** The canonical order of the trained arrays (params.ts): every trained tree and the global-norm sum use it. */
  private readonly names: readonly string[];
  private accumulated: DeviceParams | null = null;
  private readonly compiled: CompiledSteps;
  private readonly deviceBatches: DeviceBatches;

  private constructor(config: ModelConfig, params: HostParams, lora: LoraSetup | null = null) {
    checkHostParams(config, params);
    checkAttentionShape(config);
    this.config = config;
    this.params = toDevice(config, params);
    this.layerwise = new LayerwiseBackward(config);
    this.deviceBatches = new DeviceBatches(config);
    const tokens = tokensPerCall(this.trainTokenBudget, config.vocabSize, TRAIN_HEAD_ELEMENT_BUDGET);
    this.layerwiseBackward = layerwiseByDefault(config, tokens);
    this.lora = lora?.config ?? null;
    this.dropoutRng = new Rng(lora?.seed ?? 0);
    const trained = trainedArrays(config, lora);
    this.trainableShapes = trained.shapes;
    this.names = trained.names;
    this.decayed = trained.decayed;
    this.adapters = trained.adapters;
    this.loraScaleArray = trained.loraScale;
    this.adam = trained.adam;
    this.compiled = new CompiledSteps(config, this.decayed, this.names);
  }

  /** A freshly initialised model. */
  static async create(config: ModelConfigInput = {}, options: ModelOptions = {}): Promise<TransformerModel> {
    await initJax();
    const parsed = modelConfigSchema.parse(config);
    const seed = options.seed ?? 0;
    return new TransformerModel(parsed, initHostParams(parsed, seed), loraSetup(parsed, options.lora, seed));
  }

  /** A model from host parameters (a checkpoint); with `lora`, fresh adapters on them (or the given ones). */
  static async fromParams(
    config: ModelConfigInput,
    params: HostParams,
    options: { seed?: number; lora?: LoraConfigInput; adapters?: HostParams } = {},
  ): Promise<TransformerModel> {
    await initJax();
    const parsed = modelConfigSchema.parse(config);
    const lora = loraSetup(parsed, options.lora, options.seed ?? 0);
    if (lora !== null && options.adapters !== undefined) lora.adapters = options.adapters;
    return new TransformerModel(parsed, params, lora);
  }

  /** Copies the weights to the host; under LoRA, merged (W + α/r · A B), as export and serving need. */
  async hostParams(): Promise<HostParams> {
    const base = await toHost(this.config, this.params);
    if (this.lora === null) return base;
    return mergeLora(base, await this.adapterParams(), this.lora);
  }

  /** The frozen base weights (the weights themselves without LoRA). */
  baseParams(): Promise<HostParams> {
    return toHost(this.config, this.params);
  }

  /** The LoRA adapters on the host (`layers.{i}.{weight}.loraA` [in, r], `.loraB` [r, out]). */
  adapterParams(): Promise<HostParams> {
    if (this.adapters === null)
      throw new InvalidArgumentError(
        'adapterParams: the model has no LoRA adapters (create it with lora: { rank, … })',
      );
    return toHostByShapes(this.trainableShapes, this.adapters);
  }

  /** Writes the adapters in PEFT's layout (lora-peft.ts): adapter_config.json + adapter_model.safetensors. */
  async saveAdapter(folder: string, { baseModelNameOrPath }: { baseModelNameOrPath?: string } = {}): Promise<void> {
    await saveAdapter(folder, { lora: this.lora!, adapters: await this.adapterParams(), baseModelNameOrPath });
  }

  /** Copies the optimizer moments to the host (for resumable checkpoints); under LoRA, the adapters' only. */
  async optimizerState(): Promise<{ step: number; m: HostParams; v: HostParams }> {
    return {
      step: this.step,
      m: await toHostByShapes(this.trainableShapes, this.adam.m),
      v: await toHostByShapes(this.trainableShapes, this.adam.v),
    };
  }

  loadOptimizerState(state: { step: number; m: HostParams; v: HostParams }): void {
    checkOptimizerState(this.config, this.lora, this.trainableShapes, state);
    tree.dispose(this.adam);
    this.adam = {
      m: toDeviceByShapes(this.trainableShapes, state.m),
      v: toDeviceByShapes(this.trainableShapes, state.v),
    };
    this.step = state.step;
  }

  /** Replaces the weights (e.g. from a checkpoint or a reference copy). */
  setParams(params: HostParams): void {
    checkHostParams(this.config, params);
    tree.dispose(this.params);
    this.params = toDevice(this.config, params);
  }

  /** Replaces the LoRA adapters (from a saved state). */
  setAdapters(adapters: HostParams): void {
    if (this.adapters === null) throw new InvalidArgumentError('setAdapters: the model has no LoRA adapters');
    checkByShapes(this.trainableShapes, adapters, 'LoRA adapters');
    tree.dispose(this.adapters);
    this.adapters = toDeviceByShapes(this.trainableShapes, adapters);
  }

  /** Device params for the sampler in this folder (with the adapters under LoRA); shares references (caller must not consume). */
  deviceParams(): DeviceParams {
    if (this.adapters === null) return this.params;
    return { ...this.params, ...this.adapters, 'lora.scale': this.loraScaleArray! };
  }

  /** The trained arrays: the weights, or the adapters under LoRA. */
  private trainable(): DeviceParams {
    return this.adapters ?? this.params;
  }

  private setTrainable(next: DeviceParams): void {
    if (this.adapters !== null) this.adapters = next;
    else this.params = next;
  }

  /**
   * What the forward pass reads besides the trained arrays: nothing without LoRA; under LoRA the
   * frozen weights, the scale and (training with dropout) the masks for `tokens` rows. New references.
   */
  private frozenInputs(training: { tokens: number } | null): DeviceParams {
    if (this.lora === null) return {};
    const frozen: DeviceParams = { ...tree.ref(this.params), 'lora.scale': this.loraScaleArray!.ref };
    if (training !== null && this.lora.dropout > 0)
      Object.assign(frozen, dropoutMasks(this.config, this.lora, training.tokens, this.dropoutRng));
    return frozen;
  }

  // ---------------------------------------------------------------------------------------------
  // scoring

  /** Per-token log-probs (and entropies, values) of given sequences. */
  async score(sequences: readonly ArrayLike<number>[], options: ScoreOptions = {}): Promise<ScoreResult> {
    const needs = { entropy: options.entropies ?? false, value: this.config.valueHead, detachValue: false };
    return this.scoreAll(sequences, options.temperature ?? 1, needs);
  }

  private async scoreAll(
    sequences: readonly ArrayLike<number>[],
    temperature: number,
    needs: HeadNeeds,
  ): Promise<ScoreResult> {
    const result: ScoreResult = {
      logprobs: new Array(sequences.length),
      entropies: needs.entropy ? new Array(sequences.length) : undefined,
      values: needs.value ? new Array(sequences.length) : undefined,
    };
    const shape = {
      tokenBudget: this.scoreTokenBudget,
      headElements: HEAD_ELEMENT_BUDGET,
      vocabSize: this.config.vocabSize,
      maxSeqLen: this.config.maxSeqLen,
    };
    for (const { indices, packed } of microBatches(sequences, shape)) {
      const heads = await this.runHeads(packed, temperature, needs);
      const unpack = (data: Float32Array | undefined, into: Float32Array[] | undefined) => {
        if (data === undefined || into === undefined) return;
        const rows = fromNextTokenLayout(packed, data, indices.length);
        indices.forEach((index, i) => {
          into[index] = at(rows, i, 'rows');
        });
      };
      unpack(heads.logprobs, result.logprobs);
      unpack(heads.entropies, result.entropies);
      unpack(heads.values, result.values);
    }
    return result;
  }

  private async runHeads(
    packed: PackedBatch,
    temperature: number,
    needs: HeadNeeds,
  ): Promise<{ logprobs: Float32Array; entropies?: Float32Array; values?: Float32Array }> {
    const fn = this.compiled.heads(needs);
    const out = fn(
      { ...this.frozenInputs(null), ...tree.ref(this.trainable()) },
      this.deviceBatches.of(packed, temperature),
    ) as HeadArrays;
    return {
      logprobs: (await out.logprobs.data()) as Float32Array,
      entropies: out.entropies && ((await out.entropies.data()) as Float32Array),
      values: out.values && ((await out.values.data()) as Float32Array),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // training

  /**
   * Forward + loss + backward; gradients are added to an accumulator until `optimStep`.
   * Sequences longer than the context window are rejected (the rollout decides how to cut).
   */
  async forwardBackward(
    sequences: readonly ArrayLike<number>[],
    loss: TokenLoss,
    { temperature = 1 }: BackwardOptions = {},
  ): Promise<LossReport> {
    const { micro, report, needs } = await this.prepareBackward(sequences, loss, temperature);
    const surrogate = await this.accumulate(micro, needs, temperature);
    return { ...report, loss: loss.dependsOnCurrent ? report.loss : surrogate };
  }

  /**
   * Back-propagates each micro-batch's surrogate into the accumulator; returns Σ surrogate values.
   * Each micro-batch is finished (its value read) before the next is dispatched: dispatching them
   * all at once keeps every micro-batch's activations alive together, and a 512-sequence batch
   * then exceeded the 4 GiB wasm heap.
   */
  private async accumulate(micro: PreparedMicroBatch[], needs: HeadNeeds, temperature: number): Promise<number> {
    const fn = this.compiled.grad(needs);
    let total = 0;
    for (const { packed, cotangents } of micro) {
      const frozen = this.frozenInputs({ tokens: packed.tokens.length });
      const batch = this.deviceBatches.of(packed, temperature);
      const [value, grads] = this.layerwiseBackward
        ? await this.layerwise.valueAndGrad(frozen, tree.ref(this.trainable()), batch, cotangents, needs, this.names)
        : (fn(frozen, tree.ref(this.trainable()), batch, cotangents) as [JaxArray, DeviceParams]);
      if (this.accumulated === null) this.accumulated = grads;
      else this.accumulated = this.compiled.add()(this.accumulated, grads) as DeviceParams;
      total += await readScalar(value);
    }
    return total;
  }

  /** The gradient accumulated by `forwardBackward` so far, on the host (for inspection and tests). */
  async accumulatedGradients(): Promise<HostParams> {
    if (this.accumulated === null)
      throw new InvalidArgumentError('no accumulated gradients: call forwardBackward() first');
    return toHostByShapes(this.trainableShapes, this.accumulated);
  }

  /** Drops accumulated gradients without a step. */
  zeroGradients(): void {
    if (this.accumulated !== null) tree.dispose(this.accumulated);
    this.accumulated = null;
  }

  /** Clips the accumulated gradient, applies AdamW and clears the accumulator. */
  async optimStep(options: OptimOptions): Promise<{ gradNorm: number; step: number }> {
    if (this.accumulated === null)
      throw new InvalidArgumentError('optimStep() called with no gradients: call forwardBackward() first');
    this.step += 1;
    const hyper = np.array(hyperVector(options, this.step));
    const out = this.compiled.adam()(this.trainable(), this.adam, this.accumulated, hyper) as {
      params: DeviceParams;
      state: AdamState;
      gradNorm: JaxArray;
    };
    this.setTrainable(out.params);
    this.adam = out.state;
    this.accumulated = null;
    const gradNorm = await readScalar(out.gradNorm);
    return { gradNorm, step: this.step };
  }

  /**
   * One optimizer step on one batch: forwardBackward + optimStep. A batch that fits one
   * micro-batch runs forward, backward, clipping and AdamW as one compiled call.
   */
  async trainStep(
    sequences: readonly ArrayLike<number>[],
    loss: TokenLoss,
    options: OptimOptions & BackwardOptions,
  ): Promise<StepReport> {
    if (this.accumulated !== null) {
      throw new InvalidArgumentError('trainStep() with pending accumulated gradients: call optimStep() first');
    }
    const temperature = options.temperature ?? 1;
    const { micro, report, needs } = await this.prepareBackward(sequences, loss, temperature);
    let surrogate: number;
    let gradNorm: number;
    const [only] = micro;
    if (only !== undefined && micro.length === 1 && !this.layerwiseBackward) {
      this.step += 1;
      const hyper = np.array(hyperVector(options, this.step));
      const frozen = this.frozenInputs({ tokens: only.packed.tokens.length });
      const batch = this.deviceBatches.of(only.packed, temperature);
      const out = this.compiled.fused(needs)(frozen, this.trainable(), this.adam, batch, only.cotangents, hyper) as {
        params: DeviceParams;
        state: AdamState;
        gradNorm: JaxArray;
        value: JaxArray;
      };
      this.setTrainable(out.params);
      this.adam = out.state;
      gradNorm = await readScalar(out.gradNorm);
      surrogate = await readScalar(out.value);
    } else {
      surrogate = await this.accumulate(micro, needs, temperature);
      gradNorm = (await this.optimStep(options)).gradNorm;
    }
    // For a loss whose gradient is independent of the policy (linear in log-probs), the surrogate
    // Σ g·logπ is the loss itself.
    const lossValue = loss.dependsOnCurrent ? report.loss : surrogate;
    return { ...report, loss: lossValue, gradNorm, step: this.step };
  }

  private async prepareBackward(
    sequences: readonly ArrayLike<number>[],
    loss: TokenLoss,
    temperature: number,
  ): Promise<{ micro: PreparedMicroBatch[]; report: LossReport; needs: HeadNeeds }> {
    if (!(temperature > 0))
      throw new InvalidArgumentError(`temperature must be > 0, got ${temperature}`, { temperature });
    let output: TokenLossOutput;
    if (loss.dependsOnCurrent) {
      const current = await this.scoreAll(sequences, temperature, {
        entropy: true,
        value: this.config.valueHead,
        detachValue: false,
      });
      output = loss.compute(current);
    } else {
      // The gradient does not read the inputs; zeros of the right shapes stand in.
      output = loss.compute({ logprobs: sequences.map((s) => new Float32Array(s.length)) });
    }
    const needs = headNeeds(output, loss, this.config);
    const micro = cotangentBatches(sequences, output, this.config, this.trainTokenBudget);
    return { micro, report: { ...output, tokens: trainedTokens(output) }, needs };
  }
}
