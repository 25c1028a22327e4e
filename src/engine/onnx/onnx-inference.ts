/**
 * `OnnxInference`: the built-in model's scoring and sampling on onnxruntime (CPU), fed the same
 * host weights as a `TransformerModel` (+ its LoRA adapters). Training stays on the jax-js model;
 * after each optimizer step `refreshFrom(model)` hands over the new adapters (graph inputs: no new
 * session) or, without LoRA, the new weights (a new session: the weights are initializers, which
 * ORT pre-packs for its matmuls).
 *
 *   const inference = await OnnxInference.fromModel(model);
 *   const { logprobs } = await inference.score(sequences, { temperature: 0.8 });
 *   const rows = await inference.generate(prompts, { maxNewTokens: 64, seed: 1 });
 *
 * `score` and `generate` have the shapes of TransformerModel.score and model/generate.ts's
 * `generate` (same sampler, same seeded RNG order), and match them to float rounding.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at, entry } from '../../core/indexing.ts';
import {
  headDim,
  modelConfigSchema,
  type HostParams,
  type ModelConfig,
  type ModelConfigInput,
} from '../../model/config.ts';
import { checkByShapes, loraShapes, type LoraConfig } from '../../model/lora.ts';
import type { ScoreResult } from '../../model/model.ts';
import type { GeneratedRow, GenerateOptions } from '../../model/generate.ts';
import { checkHostParams } from '../../model/params.ts';
import { HEAD_ELEMENT_BUDGET, SCORE_TOKEN_BUDGET } from '../../model/micro-batches.ts';
import type { TransformerModel } from '../../model/model.ts';
import { buildModelGraph, modelGraphInputs, pastKeyName, pastValueName } from './model-graph.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession, type Feed, type HostArray } from './session.ts';
import { packRows, promptBias, ropeFeeds, scoringChunks, scoringRows, type Padding } from './feeds.ts';
import { generateOnOnnx } from './onnx-generate.ts';

export interface OnnxInferenceOptions {
  /** ORT intra-op threads; default: ORT's choice (every core). */
  threads?: number;
  /** Idle ORT threads spin between ops (ORT's default); false leaves the cores to the host between runs. */
  spinning?: boolean;
  /** Padded tokens per scoring run (attention is [rows, H, T, T]). Default: the jax-js model's. */
  scoreTokenBudget?: number;
  /** Most [M, V] logits per run. Default: the jax-js model's (2^25). */
  headElementBudget?: number;
}

export interface OnnxScoreOptions {
  /** Logits are divided by this before the softmax (match the sampling temperature). */
  temperature?: number;
  /** How rows are padded inside a run; the result does not depend on it (positions are per row). */
  padding?: Padding;
}

/** The graph's non-weight inputs for one run. */
export interface ForwardFeeds {
  tokens: Int32Array; // [B, T]
  rows: number;
  length: number;
  cos: Feed;
  sin: Feed;
  bias: Feed; // [B, 1, T, S + T]
  headRows: Int32Array; // [M]
  targets?: Int32Array; // [M]
  invTemperature?: number;
  /** Per layer [B, KV, S, hd]; default: one masked zero slot. */
  pastKeys?: Float32Array[];
  pastValues?: Float32Array[];
  cacheSlots?: number;
}

export class OnnxInference {
  private session: OnnxSession;
  private adapterFeeds: Record<string, Feed> = {};

  private constructor(
    readonly config: ModelConfig,
    readonly lora: LoraConfig | null,
    session: OnnxSession,
    private readonly options: OnnxInferenceOptions,
  ) {
    this.session = session;
  }

  /** A session over host weights (config.ts names); under LoRA, `adapters` (lora.ts names) are fed per run. */
  static async create(input: {
    config: ModelConfigInput;
    params: HostParams;
    lora?: LoraConfig | null;
    adapters?: HostParams;
    options?: OnnxInferenceOptions;
  }): Promise<OnnxInference> {
    const config = modelConfigSchema.parse(input.config);
    checkHostParams(config, input.params);
    const lora = input.lora ?? null;
    const options = input.options ?? {};
    const session = await OnnxInference.sessionFor(config, input.params, lora, options);
    const inference = new OnnxInference(config, lora, session, options);
    if (lora !== null) {
      if (input.adapters === undefined)
        throw new InvalidArgumentError(
          'OnnxInference.create: a LoRA config needs its adapters (model.adapterParams())',
        );
      inference.setAdapters(input.adapters);
    }
    return inference;
  }

  /** The same weights (and adapters) as a jax-js model. */
  static async fromModel(model: TransformerModel, options: OnnxInferenceOptions = {}): Promise<OnnxInference> {
    const adapters = model.lora === null ? undefined : await model.adapterParams();
    return OnnxInference.create({
      config: model.config,
      params: await model.baseParams(),
      lora: model.lora,
      adapters,
      options,
    });
  }

  private static async sessionFor(
    config: ModelConfig,
    params: HostParams,
    lora: LoraConfig | null,
    options: OnnxInferenceOptions,
  ): Promise<OnnxSession> {
    const bytes = serializeModel(buildModelGraph({ config, params, lora }));
    return OnnxSession.create(bytes, { threads: options.threads, spinning: options.spinning });
  }

  private setAdapters(adapters: HostParams): void {
    const shapes = loraShapes(this.config, this.lora!);
    checkByShapes(shapes, adapters, 'LoRA adapters');
    const feeds: Record<string, Feed> = {};
    for (const [name, shape] of shapes)
      feeds[name] = { dtype: 'float32', shape, data: adapters.get(name)!.data.slice() };
    this.adapterFeeds = feeds;
  }

  /** New weights: adapters (cheap, same session) and/or base params (a new session). */
  async refresh({ params, adapters }: { params?: HostParams; adapters?: HostParams }): Promise<void> {
    if (adapters !== undefined) {
      if (this.lora === null)
        throw new InvalidArgumentError('refresh: adapters given, but this inference has no LoRA config');
      this.setAdapters(adapters);
    }
    if (params !== undefined) {
      checkHostParams(this.config, params);
      const next = await OnnxInference.sessionFor(this.config, params, this.lora, this.options);
      await this.session.release();
      this.session = next;
    }
  }

  /** After an optimizer step of `model`: its adapters under LoRA, else its weights. */
  async refreshFrom(model: TransformerModel): Promise<void> {
    if (model.lora !== null) await this.refresh({ adapters: await model.adapterParams() });
    else await this.refresh({ params: await model.baseParams() });
  }

  /** One run of the graph; returns the fetched outputs. */
  async forward(
    feeds: ForwardFeeds,
    fetches: readonly string[],
  ): Promise<Record<string, { shape: number[]; data: HostArray }>> {
    const { rows: B, length: T } = feeds;
    const KV = this.config.numKvHeads;
    const hd = headDim(this.config);
    const S = feeds.cacheSlots ?? 1;
    const dummy = feeds.pastKeys === undefined ? new Float32Array(B * KV * S * hd) : null;
    const all: Record<string, Feed> = {
      ...this.adapterFeeds,
      [modelGraphInputs.tokens]: { dtype: 'int32', shape: [B, T], data: feeds.tokens },
      [modelGraphInputs.cos]: feeds.cos,
      [modelGraphInputs.sin]: feeds.sin,
      [modelGraphInputs.bias]: feeds.bias,
      [modelGraphInputs.headRows]: { dtype: 'int32', shape: [feeds.headRows.length], data: feeds.headRows },
      [modelGraphInputs.targets]: {
        dtype: 'int32',
        shape: [feeds.headRows.length],
        data: feeds.targets ?? new Int32Array(feeds.headRows.length),
      },
      [modelGraphInputs.invTemperature]: {
        dtype: 'float32',
        shape: [1],
        data: Float32Array.of(feeds.invTemperature ?? 1),
      },
    };
    for (let i = 0; i < this.config.numLayers; i++) {
      const shape = [B, KV, S, hd];
      all[pastKeyName(i)] = { dtype: 'float32', shape, data: feeds.pastKeys?.[i] ?? dummy! };
      all[pastValueName(i)] = { dtype: 'float32', shape, data: feeds.pastValues?.[i] ?? dummy! };
    }
    return this.session.run(all, fetches);
  }

  /** Per-token log-probs (and values) of given sequences, as TransformerModel.score returns them. */
  async score(
    sequences: readonly ArrayLike<number>[],
    { temperature = 1, padding = 'right' }: OnnxScoreOptions = {},
  ): Promise<ScoreResult> {
    if (!(temperature > 0))
      throw new InvalidArgumentError(`temperature must be > 0, got ${temperature}`, { temperature });
    for (const sequence of sequences) {
      if (sequence.length > this.config.maxSeqLen) {
        throw new InvalidArgumentError(
          `a sequence of ${sequence.length} tokens exceeds the model's context window of ${this.config.maxSeqLen}`,
        );
      }
    }
    const result: ScoreResult = { logprobs: sequences.map((s) => new Float32Array(s.length)) };
    if (this.config.valueHead) result.values = sequences.map((s) => new Float32Array(s.length));
    const headRowsPerRun = Math.max(
      1,
      Math.floor((this.options.headElementBudget ?? HEAD_ELEMENT_BUDGET) / this.config.vocabSize),
    );
    const tokenBudget = this.options.scoreTokenBudget ?? SCORE_TOKEN_BUDGET;
    for (const chunk of scoringChunks(
      sequences.map((s) => s.length),
      { tokenBudget, headRowsPerRun },
    )) {
      await this.scoreChunk(
        chunk.map((i) => at(sequences, i)),
        chunk,
        result,
        { temperature, padding, headRowsPerRun },
      );
    }
    return result;
  }

  private async scoreChunk(
    sequences: readonly ArrayLike<number>[],
    indices: readonly number[],
    result: ScoreResult,
    { temperature, padding, headRowsPerRun }: { temperature: number; padding: Padding; headRowsPerRun: number },
  ): Promise<void> {
    const packed = packRows(sequences, padding);
    const { headRows, targets, slots } = scoringRows(packed);
    const rope = ropeFeeds(packed.positions, packed.rows, packed.length, headDim(this.config), this.config.ropeTheta);
    const bias = promptBias(packed, 1);
    const fetches = this.config.valueHead ? ['target_logprobs', 'values'] : ['target_logprobs'];
    // A sequence longer than the head budget runs the trunk again per slice of its head rows.
    for (let start = 0; start < headRows.length; start += headRowsPerRun) {
      const end = Math.min(headRows.length, start + headRowsPerRun);
      const out = await this.forward(
        {
          tokens: packed.tokens,
          rows: packed.rows,
          length: packed.length,
          ...rope,
          bias,
          headRows: headRows.subarray(start, end),
          targets: targets.subarray(start, end),
          invTemperature: 1 / temperature,
        },
        fetches,
      );
      const logprobs = entry(out, 'target_logprobs', 'run output').data as Float32Array;
      const values = out.values?.data as Float32Array | undefined;
      for (let k = start; k < end; k++) {
        const [row, t] = at(slots, k);
        const sequence = at(indices, row);
        at(result.logprobs, sequence)[t] = at(logprobs, k - start);
        if (values !== undefined && result.values !== undefined) at(result.values, sequence)[t] = at(values, k - start);
      }
    }
  }

  /** Batched sampling with a KV cache: one ORT run per decoded token for the whole batch. */
  generate(prompts: readonly (readonly number[])[], options: GenerateOptions): Promise<GeneratedRow[]> {
    return generateOnOnnx(this, prompts, options);
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}
