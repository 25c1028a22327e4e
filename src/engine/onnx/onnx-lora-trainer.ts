/**
 * `OnnxLoraTrainer`: the built-in model's LoRA train step on onnxruntime — the same contract and
 * numbers as `TransformerModel`'s (model.ts) under LoRA, without the tensor library:
 *
 *   1. a loss that reads the current policy (PPO, GRPO, KL, entropy: `dependsOnCurrent`) gets
 *      this policy's log-probs, entropies and values from one forward run per micro-batch;
 *   2. `loss.compute` (pure JS, core/loss.ts) returns its gradient with respect to them;
 *   3. one ORT run per micro-batch computes the surrogate Σ ∂L/∂logπ · logπ (+ entropy, value
 *      terms) and its gradients with respect to every adapter (train-graph.ts, autodiff.ts);
 *      micro-batch gradients sum exactly (the surrogate is a sum over rows);
 *   4. `optimStep` clips the global norm and applies AdamW on the host (host-adamw.ts).
 *
 *   const trainer = await OnnxLoraTrainer.create({ config, params: base, lora, adapters });
 *   const report = await trainer.trainStep(sequences, rlLoss({ ... }), { learningRate: 1e-4 });
 *
 * Micro-batches: at most `trainTokenBudget` padded tokens and `headElementBudget` logits each
 * (a longer sequence runs its trunk once per slice of its head rows, as scoring does).
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import type { TokenLoss, TokenLossOutput } from '../../core/loss.ts';
import type { OptimOptions } from '../../model/adamw.ts';
import { headDim, modelConfigSchema, type HostParams, type ModelConfig, type ModelConfigInput } from '../../model/config.ts';
import { checkByShapes, loraShapes, mergeLora, type LoraConfig } from '../../model/lora.ts';
import type { LossReport, ScoreResult, StepReport } from '../../model/model.ts';
import { checkHostParams } from '../../model/params.ts';
import { packRows, promptBias, ropeFeeds, scoringChunks, scoringRows } from './feeds.ts';
import { modelGraphInputs, pastKeyName, pastValueName } from './model-graph.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession, type Feed } from './session.ts';
import { hostClipAndAdamW, type HostAdamState } from './host-adamw.ts';
import { buildTrainGraph, gradientName, trainGraphNames, type TrainHeads } from './train-graph.ts';

export interface OnnxTrainerOptions {
  /** ORT intra-op threads; default: ORT's choice (every core). */
  threads?: number;
  /** Padded tokens (rows × longest) per training run. */
  trainTokenBudget?: number;
  /** Most [M, V] logits per run. */
  headElementBudget?: number;
}

/** ORT has no wasm heap: one run may hold 4 × 256 tokens of SmolLM2's vocabulary (2^26 logits). */
export const ONNX_TRAIN_TOKEN_BUDGET = 4096;
export const ONNX_TRAIN_HEAD_ELEMENTS = 2 ** 26;

/** One run's rows: the packed sequences and the head slice it reads. */
interface RunRows {
  indices: readonly number[];
  packed: ReturnType<typeof packRows>;
  headRows: Int32Array;
  targets: Int32Array;
  slots: [number, number][];
}

function copyParams(params: HostParams): HostParams {
  return new Map([...params].map(([name, t]) => [name, { shape: [...t.shape], data: Float32Array.from(t.data) }]));
}

function zerosOf(shapes: ReadonlyMap<string, number[]>): HostParams {
  return new Map([...shapes].map(([name, shape]) => [name, { shape, data: new Float32Array(shape[0]! * shape[1]!) }]));
}

export class OnnxLoraTrainer {
  private readonly shapes: Map<string, number[]>;
  private readonly names: string[];
  private adapters: HostParams;
  private adam: HostAdamState;
  private accumulated: HostParams | null = null;
  private readonly sessions = new Map<string, Promise<OnnxSession>>();

  private constructor(
    readonly config: ModelConfig,
    readonly lora: LoraConfig,
    private readonly base: HostParams,
    adapters: HostParams,
    private readonly options: OnnxTrainerOptions,
  ) {
    this.shapes = loraShapes(config, lora);
    this.names = [...this.shapes.keys()];
    checkByShapes(this.shapes, adapters, 'LoRA adapters');
    this.adapters = copyParams(adapters);
    this.adam = { step: 0, m: zerosOf(this.shapes), v: zerosOf(this.shapes) };
  }

  /** A trainer over frozen base weights (config.ts names) and initial adapters (lora.ts names). */
  static create(input: { config: ModelConfigInput; params: HostParams; lora: LoraConfig; adapters: HostParams; options?: OnnxTrainerOptions }): OnnxLoraTrainer {
    if (input.lora.dropout > 0) {
      throw new InvalidArgumentError(`the ONNX LoRA trainer has no adapter dropout (lora.dropout ${input.lora.dropout}); set dropout 0 or train on the jax-js engine`);
    }
    const config = modelConfigSchema.parse(input.config);
    checkHostParams(config, input.params);
    return new OnnxLoraTrainer(config, input.lora, input.params, input.adapters, input.options ?? {});
  }

  get step(): number {
    return this.adam.step;
  }

  /** A copy of the current adapters. */
  adapterParams(): HostParams {
    return copyParams(this.adapters);
  }

  setAdapters(adapters: HostParams): void {
    checkByShapes(this.shapes, adapters, 'LoRA adapters');
    this.adapters = copyParams(adapters);
  }

  /** Base weights with the adapters folded in (export, serving). */
  mergedParams(): HostParams {
    return mergeLora(this.base, this.adapters, this.lora);
  }

  optimizerState(): HostAdamState {
    return { step: this.adam.step, m: copyParams(this.adam.m), v: copyParams(this.adam.v) };
  }

  loadOptimizerState(state: HostAdamState): void {
    checkByShapes(this.shapes, state.m, 'AdamW first moments');
    checkByShapes(this.shapes, state.v, 'AdamW second moments');
    this.adam = { step: state.step, m: copyParams(state.m), v: copyParams(state.v) };
  }

  private session(heads: TrainHeads, backward: boolean): Promise<OnnxSession> {
    const key = backward ? `train:${heads.entropy}:${heads.value}` : 'forward';
    let session = this.sessions.get(key);
    if (session === undefined) {
      const graph = buildTrainGraph({ config: this.config, params: this.base, lora: this.lora, heads, backward });
      session = OnnxSession.create(serializeModel(graph), { threads: this.options.threads });
      this.sessions.set(key, session);
    }
    return session;
  }

  /** The runs a batch splits into: token-budget chunks, each split further by head rows. */
  private *runs(sequences: readonly ArrayLike<number>[]): Generator<RunRows> {
    for (const sequence of sequences) {
      if (sequence.length > this.config.maxSeqLen) {
        throw new InvalidArgumentError(`a sequence of ${sequence.length} tokens exceeds the model's context window of ${this.config.maxSeqLen}`);
      }
    }
    const headRowsPerRun = Math.max(1, Math.floor((this.options.headElementBudget ?? ONNX_TRAIN_HEAD_ELEMENTS) / this.config.vocabSize));
    const tokenBudget = this.options.trainTokenBudget ?? ONNX_TRAIN_TOKEN_BUDGET;
    for (const indices of scoringChunks(sequences.map((s) => s.length), { tokenBudget, headRowsPerRun })) {
      const packed = packRows(indices.map((i) => sequences[i]!), 'right');
      const { headRows, targets, slots } = scoringRows(packed);
      for (let start = 0; start < headRows.length; start += headRowsPerRun) {
        const end = Math.min(headRows.length, start + headRowsPerRun);
        yield { indices, packed, headRows: headRows.subarray(start, end), targets: targets.subarray(start, end), slots: slots.slice(start, end) };
      }
    }
  }

  /** The graph's inputs for one run (adapters, tokens, RoPE, bias, one masked cache slot). */
  private feeds(run: RunRows, temperature: number): Record<string, Feed> {
    const { packed } = run;
    const hd = headDim(this.config);
    const KV = this.config.numKvHeads;
    const rope = ropeFeeds(packed.positions, packed.rows, packed.length, hd, this.config.ropeTheta);
    const M = run.headRows.length;
    const feeds: Record<string, Feed> = {
      [modelGraphInputs.tokens]: { dtype: 'int32', shape: [packed.rows, packed.length], data: packed.tokens },
      [modelGraphInputs.cos]: rope.cos,
      [modelGraphInputs.sin]: rope.sin,
      [modelGraphInputs.bias]: promptBias(packed, 1),
      [modelGraphInputs.headRows]: { dtype: 'int32', shape: [M], data: run.headRows },
      [modelGraphInputs.targets]: { dtype: 'int32', shape: [M], data: run.targets },
      [modelGraphInputs.invTemperature]: { dtype: 'float32', shape: [1], data: Float32Array.of(1 / temperature) },
    };
    for (const [name, tensor] of this.adapters) feeds[name] = { dtype: 'float32', shape: tensor.shape, data: tensor.data };
    const dummy: Feed = { dtype: 'float32', shape: [packed.rows, KV, 1, hd], data: new Float32Array(packed.rows * KV * hd) };
    for (let i = 0; i < this.config.numLayers; i++) {
      feeds[pastKeyName(i)] = dummy;
      feeds[pastValueName(i)] = dummy;
    }
    return feeds;
  }

  /** Per-token log-probs, entropies (and values) of the current adapters, aligned as TransformerModel.score. */
  async score(sequences: readonly ArrayLike<number>[], { temperature = 1 }: { temperature?: number } = {}): Promise<Required<Pick<ScoreResult, 'logprobs' | 'entropies'>> & ScoreResult> {
    checkTemperature(temperature);
    const zeros = () => sequences.map((s) => new Float32Array(s.length));
    const result = { logprobs: zeros(), entropies: zeros(), values: this.config.valueHead ? zeros() : undefined };
    const session = await this.session({ entropy: true, value: false }, false);
    const fetches = ['target_logprobs', trainGraphNames.entropies, ...(this.config.valueHead ? ['values'] : [])];
    for (const run of this.runs(sequences)) {
      if (run.headRows.length === 0) continue;
      const out = await session.run(this.feeds(run, temperature), fetches);
      run.slots.forEach(([row, t], k) => {
        const sequence = run.indices[row]!;
        result.logprobs[sequence]![t] = out.target_logprobs!.data[k] as number;
        result.entropies[sequence]![t] = out[trainGraphNames.entropies]!.data[k] as number;
        if (result.values) result.values[sequence]![t] = out.values!.data[k] as number;
      });
    }
    return result;
  }

  /** Forward + loss + backward; gradients add to an accumulator until `optimStep`. */
  async forwardBackward(sequences: readonly ArrayLike<number>[], loss: TokenLoss, { temperature = 1 }: { temperature?: number } = {}): Promise<LossReport> {
    checkTemperature(temperature);
    const output = loss.dependsOnCurrent ? loss.compute(await this.score(sequences, { temperature })) : loss.compute({ logprobs: sequences.map((s) => new Float32Array(s.length)) });
    if (output.gradValues !== undefined && !this.config.valueHead) {
      throw new InvalidArgumentError(`loss "${loss.name}" trains a value head, but the model has none (set valueHead: true)`);
    }
    // Under LoRA the value head is frozen: a detached value term moves nothing.
    const heads: TrainHeads = { entropy: output.gradEntropies !== undefined, value: output.gradValues !== undefined && loss.detachValueHead !== true };
    const surrogate = await this.accumulate(sequences, output, heads, temperature);
    let tokens = 0;
    for (const g of output.gradLogprobs) for (let t = 0; t < g.length; t++) if (g[t] !== 0) tokens++;
    return { ...output, tokens, loss: loss.dependsOnCurrent ? output.loss : surrogate };
  }

  private async accumulate(sequences: readonly ArrayLike<number>[], output: TokenLossOutput, heads: TrainHeads, temperature: number): Promise<number> {
    const session = await this.session(heads, true);
    const fetches = [trainGraphNames.surrogate, ...this.names.map(gradientName)];
    this.accumulated ??= zerosOf(this.shapes);
    let total = 0;
    for (const run of this.runs(sequences)) {
      if (run.headRows.length === 0) continue;
      const feeds = this.feeds(run, temperature);
      const cotangent = (arrays: Float32Array[]) => Float32Array.from(run.slots, ([row, t]) => arrays[run.indices[row]!]![t]!);
      feeds[trainGraphNames.gradLogprobs] = { dtype: 'float32', shape: [run.slots.length], data: cotangent(output.gradLogprobs) };
      if (heads.entropy) feeds[trainGraphNames.gradEntropies] = { dtype: 'float32', shape: [run.slots.length], data: cotangent(output.gradEntropies!) };
      if (heads.value) feeds[trainGraphNames.gradValues] = { dtype: 'float32', shape: [run.slots.length], data: cotangent(output.gradValues!) };
      const out = await session.run(feeds, fetches);
      total += out[trainGraphNames.surrogate]!.data[0] as number;
      for (const name of this.names) {
        const sum = this.accumulated.get(name)!.data;
        const part = out[gradientName(name)]!.data as Float32Array;
        for (let i = 0; i < sum.length; i++) sum[i] = sum[i]! + part[i]!;
      }
    }
    return total;
  }

  /** The gradient accumulated so far (a copy). */
  accumulatedGradients(): HostParams {
    if (this.accumulated === null) throw new InvalidArgumentError('no accumulated gradients: call forwardBackward() first');
    return copyParams(this.accumulated);
  }

  zeroGradients(): void {
    this.accumulated = null;
  }

  /** Clips the accumulated gradient, applies AdamW to the adapters and clears the accumulator. */
  optimStep(options: OptimOptions): { gradNorm: number; step: number } {
    if (this.accumulated === null) throw new InvalidArgumentError('optimStep() called with no gradients: call forwardBackward() first');
    const gradNorm = hostClipAndAdamW(this.adapters, this.adam, this.accumulated, options, { names: this.names, decayed: new Set(this.names) });
    this.accumulated = null;
    return { gradNorm, step: this.adam.step };
  }

  /** forwardBackward + optimStep on one batch. */
  async trainStep(sequences: readonly ArrayLike<number>[], loss: TokenLoss, options: OptimOptions & { temperature?: number }): Promise<StepReport> {
    if (this.accumulated !== null) throw new InvalidArgumentError('trainStep() with pending accumulated gradients: call optimStep() first');
    const report = await this.forwardBackward(sequences, loss, { temperature: options.temperature });
    const { gradNorm, step } = this.optimStep(options);
    return { ...report, gradNorm, step };
  }

  async release(): Promise<void> {
    for (const session of this.sessions.values()) await (await session).release();
    this.sessions.clear();
  }
}

function checkTemperature(temperature: number): void {
  if (!(temperature > 0)) throw new InvalidArgumentError(`temperature must be > 0, got ${temperature}`, { temperature });
}
