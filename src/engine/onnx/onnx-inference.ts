/**
 * `OnnxInference`: the built-in model's scoring and sampling on onnxruntime (CPU), fed the same
 * host weights as a `TransformerModel` (+ its LoRA adapters): the model's generation session
 * (transformer-model.ts `inferenceSession`). After an optimizer step `refresh` takes the new
 * adapters (graph inputs: no new session) or, without LoRA, the new weights (a new session: the
 * weights are initializers, which ORT pre-packs for its matmuls).
 *
 *   const inference = await OnnxInference.fromModel(model);
 *   const { logprobs } = await inference.score(sequences, { temperature: 0.8 });
 *   const rows = await inference.generate(prompts, { maxNewTokens: 64, seed: 1 });
 *
 * `score` and `generate` have the shapes of TransformerModel.score and engine/generate.ts's
 * `generate` (same sampler, same seeded RNG order).
 *
 * `withAdapters(adapters)` makes another inference on the SAME session (the base's initializers
 * pre-packed once) with its own adapters: a LoRA model's forks (transformer-model.ts
 * `forkAdapters`) generate on one session. The session is reference-counted (session.ts): each
 * inference and each running call holds it, so `release` of one inference, or a `refresh` with new
 * weights, frees it only when no other inference or call still runs on it.
 *
 * `createGroups(…, groups: R)` makes a session whose batches carry R adapter sets (model-graph.ts
 * `adapterGroups`); `generateGroups` samples each member inference's prompts with that member's
 * adapters in one batch (engine/generate-across.ts).
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import {
  headDim,
  modelConfigSchema,
  type HostParams,
  type ModelConfig,
  type ModelConfigInput,
} from '../../model/config.ts';
import { checkByShapes, loraShapes, type LoraConfig } from '../../model/lora.ts';
import type { ScoreResult } from '../../model/model-options.ts';
import type { GeneratedRow, GenerateOptions } from '../../model/generate-options.ts';
import { checkHostParams } from '../../model/params.ts';
import { HEAD_ELEMENT_BUDGET, scoreTokenBudgetFor } from '../../model/micro-batches.ts';
import type { TransformerModel } from '../transformer-model.ts';
import {
  adapterRowsInput,
  buildModelGraph,
  groupAdapterName,
  modelGraphInputs,
  pastKeyName,
  pastValueName,
} from './model-graph.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession, type Feed, type HostArray } from './session.ts';
import type { ForwardFeeds, InferenceRuns, OnnxScoreOptions } from './inference-runs.ts';
import { scoreOnOnnx } from './onnx-score.ts';
import { generateGroupsOnOnnx, generateOnOnnx } from './onnx-generate.ts';
import type { BaseQuantization } from './matmul-nbits.ts';

export interface OnnxInferenceOptions {
  /** ORT intra-op threads; default: ORT's choice (every core). */
  threads?: number;
  /** Idle ORT threads spin between ops (ORT's default); false leaves the cores to the host between runs. */
  spinning?: boolean;
  /** Padded tokens per scoring run (attention is [rows, H, T, T]). Default: scoreTokenBudgetFor (model/micro-batches.ts). */
  scoreTokenBudget?: number;
  /** Most [M, V] logits per run. Default: HEAD_ELEMENT_BUDGET (2^25). */
  headElementBudget?: number;
  /**
   * 'int4': the base's projections and head as 4-bit blocks (matmul-nbits.ts) — faster decoding at
   * small batches, log-probs off by a measured tolerance (see the tests). Default 'float32'.
   */
  baseQuantization?: BaseQuantization;
}

/** One inverse temperature for the run ([1]) or one per head row ([M]). */
function inverseTemperatureFeed(value: number | Float32Array): Feed {
  const data = typeof value === 'number' ? Float32Array.of(value) : value;
  return { dtype: 'float32', shape: [data.length], data };
}

/** One group of a grouped generation: prompts sampled with `member`'s adapters and these options. */
export interface GroupGeneration {
  member: OnnxInference;
  prompts: readonly (readonly number[])[];
  options: GenerateOptions;
}

export type { ForwardFeeds, InferenceRuns, OnnxScoreOptions } from './inference-runs.ts';

export class OnnxInference {
  /** Held once by this inference (and once more by each running call: see `pinned`). */
  private session: OnnxSession;
  private adapterFeeds: Record<string, Feed> = {};
  private released = false;
  /** While `moveTo` runs: calls wait for the new session. */
  private pending: Promise<void> | null = null;
  /** The shared base (shared-base.ts) that handed out this inference, and its options; set once by it. */
  origin: { base: object; options: OnnxInferenceOptions } | null = null;

  private constructor(
    readonly config: ModelConfig,
    readonly lora: LoraConfig | null,
    session: OnnxSession,
    private readonly options: OnnxInferenceOptions,
    /** Adapter sets one batch carries (model-graph.ts adapterGroups); 1: the plain graph. */
    private groups = 1,
  ) {
    this.session = session;
  }

  /** Adapter sets a batch of this inference's session carries (1: the plain graph). */
  get adapterGroups(): number {
    return this.groups;
  }

  /**
   * Moves this inference onto `next`'s session (the same base, as a grouped graph: shared-base.ts
   * moves a base's members there on their first joint call). Its hold on the current session is
   * dropped at once, so that session can be freed before the next one is built; calls starting
   * meanwhile wait for it, a call already running finishes on the old session. Later calls give
   * the same numbers.
   */
  async moveTo(next: Promise<OnnxInference>): Promise<void> {
    this.checkLive('moveTo');
    let moved = (): void => {};
    this.pending = new Promise((resolve) => {
      moved = resolve;
    });
    try {
      await this.session.release();
      const target = await next;
      this.session = target.session.retain();
      this.groups = target.groups;
    } finally {
      this.pending = null;
      moved();
    }
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

  /** The same weights (and adapters) as `model`. */
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

  /**
   * A session whose batches carry `groups` (> 1) adapter sets, each row run with its set's adapters
   * (generateGroups): the base weights as initializers, the sets fed per call. LoRA only. Its
   * `withAdapters` views run their own calls with every row in set 0 (the same numbers as the plain
   * graph: the same matmuls on the same rows, an empty part beside them).
   */
  static async createGroups(input: {
    config: ModelConfig;
    params: HostParams;
    lora: LoraConfig;
    groups: number;
    options?: OnnxInferenceOptions;
  }): Promise<OnnxInference> {
    checkHostParams(input.config, input.params);
    const options = input.options ?? {};
    const session = await OnnxInference.sessionFor(input.config, input.params, input.lora, options, input.groups);
    return new OnnxInference(input.config, input.lora, session, options, input.groups);
  }

  private static async sessionFor(
    config: ModelConfig,
    params: HostParams,
    lora: LoraConfig | null,
    options: OnnxInferenceOptions,
    adapterGroups = 1,
  ): Promise<OnnxSession> {
    const graph = buildModelGraph({
      config,
      params,
      lora,
      baseQuantization: options.baseQuantization,
      adapterGroups,
      probabilities: true,
    });
    const bytes = serializeModel(graph);
    return OnnxSession.create(bytes, { threads: options.threads, spinning: options.spinning });
  }

  /**
   * Another inference on this one's session (no new session, no copy of the base) with its own
   * LoRA `adapters` (copied); without LoRA, none. Each is released on its own; the session goes
   * with the last.
   */
  withAdapters(adapters?: HostParams): OnnxInference {
    this.checkLive('withAdapters');
    if (this.lora === null && adapters !== undefined)
      throw new InvalidArgumentError('withAdapters: adapters given, but this inference has no LoRA config');
    if (this.lora !== null && adapters === undefined)
      throw new InvalidArgumentError('withAdapters: a LoRA inference needs the adapters to run with');
    const inference = new OnnxInference(this.config, this.lora, this.session.retain(), this.options, this.groups);
    if (adapters !== undefined) inference.setAdapters(adapters);
    return inference;
  }

  private checkLive(call: string): void {
    if (this.released) throw new InvalidArgumentError(`${call}: this OnnxInference was released`);
  }

  private setAdapters(adapters: HostParams): void {
    const shapes = loraShapes(this.config, this.lora!);
    checkByShapes(shapes, adapters, 'LoRA adapters');
    const feeds: Record<string, Feed> = {};
    for (const [name, shape] of shapes)
      feeds[name] = { dtype: 'float32', shape, data: adapters.get(name)!.data.slice() };
    this.adapterFeeds = feeds;
  }

  /** This inference's own adapters as a run's feeds: on a grouped session, as every set's (its rows all in set 0). */
  private ownAdapterFeeds(): Record<string, Feed> {
    if (this.adapterGroups === 1) return this.adapterFeeds;
    const feeds: Record<string, Feed> = {};
    for (let k = 0; k < this.adapterGroups; k++)
      for (const [name, feed] of Object.entries(this.adapterFeeds)) feeds[groupAdapterName(name, k)] = feed;
    return feeds;
  }

  /** New weights: adapters (cheap, same session) and/or base params (a new session). */
  async refresh({ params, adapters }: { params?: HostParams; adapters?: HostParams }): Promise<void> {
    if (adapters !== undefined) {
      if (this.lora === null)
        throw new InvalidArgumentError('refresh: adapters given, but this inference has no LoRA config');
      this.setAdapters(adapters);
    }
    if (params !== undefined) {
      this.checkLive('refresh');
      checkHostParams(this.config, params);
      const next = await OnnxInference.sessionFor(this.config, params, this.lora, this.options, this.adapterGroups);
      const previous = this.session;
      this.session = next;
      await previous.release(); // freed now, or when the last call (or inference) on it lets go
    }
  }

  /** After an optimizer step of `model`: its adapters under LoRA, else its weights. */
  async refreshFrom(model: TransformerModel): Promise<void> {
    if (model.lora !== null) await this.refresh({ adapters: await model.adapterParams() });
    else await this.refresh({ params: await model.baseParams() });
  }

  /** Runs `call` on the current session and adapters (or `adapterFeeds`), kept for the whole call (see InferenceRuns). */
  private async pinned<R>(call: (runs: InferenceRuns) => Promise<R>, feeds?: Record<string, Feed>): Promise<R> {
    if (this.pending !== null) await this.pending;
    this.checkLive('a generation or scoring call');
    const session = this.session.retain();
    const adapterFeeds = feeds ?? this.ownAdapterFeeds();
    try {
      return await call({
        config: this.config,
        forward: (feeds, fetches) => this.runOn(session, adapterFeeds, feeds, fetches),
      });
    } finally {
      await session.release();
    }
  }

  /** One run of the graph; returns the fetched outputs. */
  forward(
    feeds: ForwardFeeds,
    fetches: readonly string[],
  ): Promise<Record<string, { shape: number[]; data: HostArray }>> {
    return this.pinned((runs) => runs.forward(feeds, fetches));
  }

  private async runOn(
    session: OnnxSession,
    adapterFeeds: Record<string, Feed>,
    feeds: ForwardFeeds,
    fetches: readonly string[],
  ): Promise<Record<string, { shape: number[]; data: HostArray }>> {
    const { rows: B, length: T } = feeds;
    const KV = this.config.numKvHeads;
    const hd = headDim(this.config);
    const S = feeds.cacheSlots ?? 1;
    const dummy = feeds.pastKeys === undefined ? new Float32Array(B * KV * S * hd) : null;
    const all: Record<string, Feed> = {
      ...adapterFeeds,
      ...this.adapterRowsFeed(feeds),
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
      [modelGraphInputs.invTemperature]: inverseTemperatureFeed(feeds.invTemperature ?? 1),
    };
    for (let i = 0; i < this.config.numLayers; i++) {
      const shape = [B, KV, S, hd];
      all[pastKeyName(i)] = { dtype: 'float32', shape, data: feeds.pastKeys?.[i] ?? dummy! };
      all[pastValueName(i)] = { dtype: 'float32', shape, data: feeds.pastValues?.[i] ?? dummy! };
    }
    return session.run(all, fetches);
  }

  /** The `adapter_rows` feed of a run on a grouped session (none on a plain one). */
  private adapterRowsFeed(feeds: ForwardFeeds): Record<string, Feed> {
    if (this.adapterGroups === 1) return {};
    const counts = feeds.adapterRows ?? [feeds.rows]; // a member's own call: every row in set 0
    if (counts.length > this.adapterGroups || counts.reduce((sum, n) => sum + n, 0) !== feeds.rows)
      throw new InvalidArgumentError(
        `a grouped run needs rows per adapter set summing to its ${feeds.rows} rows (at most ${this.adapterGroups} sets); got [${counts.join(', ')}]`,
      );
    const data = new BigInt64Array(this.adapterGroups);
    counts.forEach((n, k) => {
      data[k] = BigInt(n);
    });
    return { [adapterRowsInput]: { dtype: 'int64', shape: [this.adapterGroups], data } };
  }

  /**
   * On a grouped session (createGroups): each group's prompts sampled with its member inference's
   * current adapters and its own options, all in one batch — each group's rows as
   * `member.generate(prompts, options)` returns them (up to float rounding). At most
   * `adapterGroups` groups; the members must run on this config and LoRA shapes.
   */
  generateGroups(groups: readonly GroupGeneration[]): Promise<GeneratedRow[][]> {
    if (groups.length > this.adapterGroups || groups.length === 0)
      throw new InvalidArgumentError(
        `generateGroups: 1 to ${this.adapterGroups} groups on this session, got ${groups.length}`,
      );
    const feeds: Record<string, Feed> = {};
    for (let k = 0; k < this.adapterGroups; k++) {
      const member = at(groups, Math.min(k, groups.length - 1), 'groups').member; // unused sets: any adapters, 0 rows
      member.checkLive('generateGroups');
      if (member.config !== this.config && JSON.stringify(member.config) !== JSON.stringify(this.config))
        throw new InvalidArgumentError('generateGroups: a member inference has another model config');
      for (const [name, feed] of Object.entries(member.adapterFeeds)) feeds[groupAdapterName(name, k)] = feed;
    }
    return this.pinned((runs) => generateGroupsOnOnnx(runs, groups), feeds);
  }

  /** Per-token log-probs (and values) of given sequences, as TransformerModel.score returns them (onnx-score.ts). */
  score(sequences: readonly ArrayLike<number>[], options: OnnxScoreOptions = {}): Promise<ScoreResult> {
    const budgets = {
      tokenBudget: this.options.scoreTokenBudget ?? scoreTokenBudgetFor(this.config),
      headElementBudget: this.options.headElementBudget ?? HEAD_ELEMENT_BUDGET,
    };
    return scoreOnOnnx((call) => this.pinned(call), this.config, sequences, options, budgets);
  }

  /** Batched sampling with a KV cache: one ORT run per decoded token for the whole batch. */
  generate(prompts: readonly (readonly number[])[], options: GenerateOptions): Promise<GeneratedRow[]> {
    return this.pinned((runs) => generateOnOnnx(runs, prompts, options));
  }

  /** Lets go of the session (freed once no other inference or running call holds it); later calls are refused. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.session.release();
  }
}
