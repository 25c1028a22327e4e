/**
 * `OnnxLoraTrainer`: the built-in model's LoRA train step on onnxruntime — the same contract and
 * numbers as `TransformerModel`'s (model.ts) under LoRA, without the tensor library:
 *
 *   1. a forward run per micro-batch gives this policy's log-probs, entropies and values, which a
 *      loss that reads the current policy (PPO, GRPO, KL, entropy: `dependsOnCurrent`) needs,
 *      and the activations the backward reads;
 *   2. `loss.compute` (pure JS, core/loss.ts) returns its gradient with respect to them;
 *   3. a backward run per micro-batch takes those activations and the loss gradient and computes
 *      the surrogate Σ ∂L/∂logπ · logπ (+ entropy, value terms) and its gradients with respect to
 *      every adapter (train-graph.ts, autodiff.ts, split-graph.ts); micro-batch gradients sum
 *      exactly (the surrogate is a sum over rows). A batch of one micro-batch runs its forward
 *      once; a longer one keeps no activations across the loss and runs each forward again;
 *   4. `optimStep` clips the global norm and applies AdamW on the host (host-adamw.ts).
 *
 *   const trainer = await OnnxLoraTrainer.create({ config, params: base, lora, adapters });
 *   const report = await trainer.trainStep(sequences, rlLoss({ ... }), { learningRate: 1e-4 });
 *
 * Micro-batches: at most `trainTokenBudget` padded tokens and `headElementBudget` logits each
 * (a longer sequence runs its trunk once per slice of its head rows, as scoring does).
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at, entry } from '../../core/indexing.ts';
import type { TokenLoss, TokenLossOutput } from '../../core/loss.ts';
import type { OptimOptions } from '../../model/adamw.ts';
import { modelConfigSchema, type HostParams, type ModelConfig, type ModelConfigInput } from '../../model/config.ts';
import { checkByShapes, loraShapes, mergeLora, type LoraConfig } from '../../model/lora.ts';
import type { LossReport, ScoreResult, StepReport } from '../../model/model.ts';
import { checkHostParams } from '../../model/params.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession, type Feed, type HostArray } from './session.ts';
import { hostClipAndAdamW, type HostAdamState } from './host-adamw.ts';
import { buildTrainGraphs, gradientName, trainGraphNames, type TrainHeads } from './train-graph.ts';
import { type OnnxTrainerOptions, type RunRows, runFeeds, trainingRuns } from './train-runs.ts';

/** The forward and backward sessions of one head combination, and what crosses from one to the other. */
interface SessionPair {
  forward: OnnxSession;
  backward: OnnxSession;
  /** The forward graph's scored heads (target_logprobs, entropies, values). */
  scored: string[];
  /** Forward outputs the backward graph reads, with their dtypes. */
  transferred: { name: string; dtype: Feed['dtype'] }[];
}

type RunOutputs = Record<string, { shape: number[]; data: HostArray }>;

/** The feeds a session declares (ORT refuses unknown names). */
function pick(feeds: Record<string, Feed>, names: readonly string[]): Record<string, Feed> {
  return Object.fromEntries(names.map((name) => [name, entry(feeds, name, 'feed')]));
}

function copyParams(params: HostParams): HostParams {
  return new Map([...params].map(([name, t]) => [name, { shape: [...t.shape], data: Float32Array.from(t.data) }]));
}

function zerosOf(shapes: ReadonlyMap<string, number[]>): HostParams {
  return new Map(
    [...shapes].map(([name, shape]) => [name, { shape, data: new Float32Array(at(shape, 0) * at(shape, 1)) }]),
  );
}

export class OnnxLoraTrainer {
  private readonly shapes: Map<string, number[]>;
  private readonly names: string[];
  private adapters: HostParams;
  private adam: HostAdamState;
  private accumulated: HostParams | null = null;
  private readonly pairs = new Map<string, Promise<SessionPair>>();
  /** The heads the last loss read: the forward run before the next loss uses that pair's graph. */
  private lastHeads: TrainHeads = { entropy: false, value: false };

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
  static create(input: {
    config: ModelConfigInput;
    params: HostParams;
    lora: LoraConfig;
    adapters: HostParams;
    options?: OnnxTrainerOptions;
  }): OnnxLoraTrainer {
    if (input.lora.dropout > 0) {
      throw new InvalidArgumentError(
        `the ONNX LoRA trainer has no adapter dropout (lora.dropout ${input.lora.dropout}); set dropout 0 or train on the jax-js engine`,
      );
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

  private pair(heads: TrainHeads): Promise<SessionPair> {
    const key = `${heads.entropy}:${heads.value}`;
    let pair = this.pairs.get(key);
    if (pair === undefined) {
      pair = (async () => {
        const graphs = buildTrainGraphs({ config: this.config, params: this.base, lora: this.lora, heads });
        const types = new Map(
          graphs.backward.inputs.map((id) => [graphs.backward.info(id).name, graphs.backward.info(id).dtype]),
        );
        const forward = await OnnxSession.create(serializeModel(graphs.forward), {
          threads: this.options.threads,
          memoryArena: false,
        });
        const backward = await OnnxSession.create(serializeModel(graphs.backward), {
          threads: this.options.threads,
          memoryArena: false,
        });
        return {
          forward,
          backward,
          scored: graphs.scored,
          transferred: graphs.transferred.map((name) => ({ name, dtype: types.get(name)! })),
        };
      })();
      this.pairs.set(key, pair);
    }
    return pair;
  }

  /** One forward run: the scored heads and the activations the backward graph reads. */
  private async forwardRun(pair: SessionPair, run: RunRows, temperature: number): Promise<RunOutputs> {
    const fetches = [...new Set([...pair.scored, ...pair.transferred.map((t) => t.name)])];
    return pair.forward.run(
      pick(runFeeds(run, temperature, this.config, this.adapters), pair.forward.inputNames),
      fetches,
    );
  }

  /** Per-token log-probs, entropies (and values) of the current adapters, aligned as TransformerModel.score. */
  async score(
    sequences: readonly ArrayLike<number>[],
    { temperature = 1 }: { temperature?: number } = {},
  ): Promise<Required<Pick<ScoreResult, 'logprobs' | 'entropies'>> & ScoreResult> {
    checkTemperature(temperature);
    return (
      await this.scoreRuns([...trainingRuns(sequences, this.config, this.options)], sequences, temperature, false)
    ).result;
  }

  /** Scores every run with the last loss's forward graph; keeps the run outputs when `keep` (for the backward). */
  private async scoreRuns(
    runs: readonly RunRows[],
    sequences: readonly ArrayLike<number>[],
    temperature: number,
    keep: boolean,
  ) {
    const zeros = () => sequences.map((s) => new Float32Array(s.length));
    const result = { logprobs: zeros(), entropies: zeros(), values: this.config.valueHead ? zeros() : undefined };
    const heads = this.lastHeads;
    const pair = await this.pair(heads);
    const kept: (RunOutputs | null)[] = [];
    for (const run of runs) {
      const out = await this.forwardRun(pair, run, temperature);
      const logprobs = entry(out, 'target_logprobs', 'run output').data as Float32Array;
      const entropies = entry(out, trainGraphNames.entropies, 'run output').data as Float32Array;
      const valueRows = result.values;
      const values = valueRows === undefined ? undefined : (entry(out, 'values', 'run output').data as Float32Array);
      run.slots.forEach(([row, t], k) => {
        const sequence = at(run.indices, row);
        at(result.logprobs, sequence)[t] = at(logprobs, k);
        at(result.entropies, sequence)[t] = at(entropies, k);
        if (valueRows !== undefined && values !== undefined) at(valueRows, sequence)[t] = at(values, k);
      });
      kept.push(keep ? out : null);
    }
    return { result, kept, heads };
  }

  /** Forward + loss + backward; gradients add to an accumulator until `optimStep`. */
  async forwardBackward(
    sequences: readonly ArrayLike<number>[],
    loss: TokenLoss,
    { temperature = 1 }: { temperature?: number } = {},
  ): Promise<LossReport> {
    checkTemperature(temperature);
    const runs = [...trainingRuns(sequences, this.config, this.options)];
    let kept: (RunOutputs | null)[] = runs.map(() => null);
    let output: TokenLossOutput;
    if (loss.dependsOnCurrent) {
      const scored = await this.scoreRuns(runs, sequences, temperature, runs.length === 1);
      output = loss.compute(scored.result);
      kept = scored.kept;
      this.lastHeads = this.headsFor(loss, output);
      // The kept activations are of the graph for the heads guessed before the loss ran.
      if (scored.heads.entropy !== this.lastHeads.entropy || scored.heads.value !== this.lastHeads.value)
        kept = runs.map(() => null);
    } else {
      output = loss.compute({ logprobs: sequences.map((s) => new Float32Array(s.length)) });
      this.lastHeads = this.headsFor(loss, output);
    }
    const surrogate = await this.accumulate(runs, kept, output, temperature);
    let tokens = 0;
    for (const g of output.gradLogprobs) for (let t = 0; t < g.length; t++) if (g[t] !== 0) tokens++;
    return { ...output, tokens, loss: loss.dependsOnCurrent ? output.loss : surrogate };
  }

  private headsFor(loss: TokenLoss, output: TokenLossOutput): TrainHeads {
    if (output.gradValues !== undefined && !this.config.valueHead) {
      throw new InvalidArgumentError(
        `loss "${loss.name}" trains a value head, but the model has none (set valueHead: true)`,
      );
    }
    // Under LoRA the value head is frozen: a detached value term moves nothing.
    return {
      entropy: output.gradEntropies !== undefined,
      value: output.gradValues !== undefined && loss.detachValueHead !== true,
    };
  }

  private async accumulate(
    runs: readonly RunRows[],
    kept: (RunOutputs | null)[],
    output: TokenLossOutput,
    temperature: number,
  ): Promise<number> {
    const heads = this.lastHeads;
    const pair = await this.pair(heads);
    const fetches = [trainGraphNames.surrogate, ...this.names.map(gradientName)];
    this.accumulated ??= zerosOf(this.shapes);
    let total = 0;
    for (const [index, run] of runs.entries()) {
      const forward = kept[index] ?? (await this.forwardRun(pair, run, temperature));
      kept[index] = null;
      const feeds = runFeeds(run, temperature, this.config, this.adapters);
      for (const { name, dtype } of pair.transferred) {
        const { shape, data } = entry(forward, name, 'run output');
        feeds[name] = { dtype, shape, data };
      }
      const cotangent = (arrays: Float32Array[]) =>
        Float32Array.from(run.slots, ([row, t]) => at(at(arrays, at(run.indices, row)), t));
      feeds[trainGraphNames.gradLogprobs] = {
        dtype: 'float32',
        shape: [run.slots.length],
        data: cotangent(output.gradLogprobs),
      };
      if (heads.entropy)
        feeds[trainGraphNames.gradEntropies] = {
          dtype: 'float32',
          shape: [run.slots.length],
          data: cotangent(output.gradEntropies!),
        };
      if (heads.value)
        feeds[trainGraphNames.gradValues] = {
          dtype: 'float32',
          shape: [run.slots.length],
          data: cotangent(output.gradValues!),
        };
      const out = await pair.backward.run(pick(feeds, pair.backward.inputNames), fetches);
      total += at(entry(out, trainGraphNames.surrogate, 'run output').data as Float32Array, 0);
      for (const name of this.names) {
        const sum = this.accumulated.get(name)!.data;
        const part = entry(out, gradientName(name), 'run output').data as Float32Array;
        for (let i = 0; i < sum.length; i++) sum[i] = at(sum, i) + at(part, i);
      }
    }
    return total;
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

  /** Clips the accumulated gradient, applies AdamW to the adapters and clears the accumulator. */
  optimStep(options: OptimOptions): { gradNorm: number; step: number } {
    if (this.accumulated === null)
      throw new InvalidArgumentError('optimStep() called with no gradients: call forwardBackward() first');
    const gradNorm = hostClipAndAdamW(this.adapters, this.adam, this.accumulated, options, {
      names: this.names,
      decayed: new Set(this.names),
    });
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
    const report = await this.forwardBackward(sequences, loss, { temperature: options.temperature });
    const { gradNorm, step } = this.optimStep(options);
    return { ...report, gradNorm, step };
  }

  async release(): Promise<void> {
    for (const pair of this.pairs.values()) {
      const { forward, backward } = await pair;
      await forward.release();
      await backward.release();
    }
    this.pairs.clear();
  }
}

function checkTemperature(temperature: number): void {
  if (!(temperature > 0))
    throw new InvalidArgumentError(`temperature must be > 0, got ${temperature}`, { temperature });
}
