/**
 * Batched sampling on onnxruntime with a host-side KV cache (decode-cache.ts): prompts left-padded
 * to a shared length P (positions per row, padding masked), prefill runs, then ONE run per decoded
 * token for the whole batch. Each run returns the head rows' probabilities at each row's
 * temperature (the graph's vectorised softmax, per-row `inv_temperature`); sampling is
 * model/sampling.ts's `sampleToken` on them (through RowSampler), with one seeded RNG visited in
 * row order, so a seed gives the same tokens as far as float rounding allows.
 *
 * Prefix sharing: identical prompts in one call (the G samples of a GRPO group) are prefilled once;
 * their keys/values are written into every row that shares them. Their first-token logits are the
 * same row, copied, so each row still draws its own token from the shared RNG in row order.
 * Rows that stop early leave the decode runs (LiveRows); the cache grows by chunks (decode-cache.ts).
 *
 * Float rounding: the cache width and the rows a run carries change the matmul shapes, so logits
 * move by ~1e-5 (greedy tokens stay the same); at temperature 1 on SmolLM2 such a change flips
 * about 3 in 1,000 seeded draws, after which that row's text differs.
 *
 * Groups (`generateGroupsOnOnnx`): one batch of several callers' prompts, each group with its own
 * options and RNG (sampling-groups.ts), on a grouped session each with its own adapters
 * (onnx-inference.ts `createGroups`: LoRA forks of one base, engine/generate-across.ts). Equal
 * prompts of different groups are prefilled apart; every run feeds its rows per group.
 */
import { at, entry } from '../../core/indexing.ts';
import { headDim } from '../../model/config.ts';
import { yieldToEventLoop, type GeneratedRow, type GenerateOptions } from '../../model/generate-options.ts';
import { scoreTokenBudgetFor } from '../../model/micro-batches.ts';
import { CACHE_CHUNK, DecodeBias, DecodeCache } from './decode-cache.ts';
import { MASKED, packRows, promptBias, ropeFeeds } from './feeds.ts';
import { keyOutputName, valueOutputName } from './model-graph.ts';
import type { InferenceRuns } from './onnx-inference.ts';
import { SamplingGroups, type SamplingGroup } from './sampling-groups.ts';

/**
 * The distinct prompts and, for each, the rows that asked for it (in row order). With `groupOf`
 * (each row's adapter set), equal prompts of different sets stay apart (their keys/values differ).
 */
export function distinctPrompts(
  prompts: readonly (readonly number[])[],
  groupOf?: Int32Array,
): {
  prompts: (readonly number[])[];
  rows: number[][];
} {
  const index = new Map<string, number>();
  const distinct: (readonly number[])[] = [];
  const rows: number[][] = [];
  prompts.forEach((prompt, b) => {
    const key = groupOf === undefined ? prompt.join(',') : `${groupOf[b]}:${prompt.join(',')}`;
    let k = index.get(key);
    if (k === undefined) {
      k = distinct.length;
      index.set(key, k);
      distinct.push(prompt);
      rows.push([]);
    }
    at(rows, k, 'rows').push(b);
  });
  return { prompts: distinct, rows };
}

/**
 * Runs the distinct prompts, left-padded to P, in row groups of at most a scoring run's padded
 * tokens (micro-batches.ts `scoreTokenBudgetFor`: 64 SmolLM2 prompts of 200 tokens peaked
 * 2,626–2,653 MB RSS at its 1,040 tokens a run vs 2,942–3,037 MB at 4,096, 30.5–31.8 s either way,
 * 2 threads, 2026-12-06), or the callers' `prefillTokenBudget`;
 * writes their keys/values into cache slots [0, P) of every row that shares them and returns the
 * last positions' probabilities [B, V] (in row order; rows that share a prompt share a group, so
 * a temperature).
 */
async function prefill(
  inference: InferenceRuns,
  prompts: readonly (readonly number[])[],
  { P, cache, fetches, groups }: { P: number; cache: DecodeCache; fetches: string[]; groups: SamplingGroups },
): Promise<Float32Array> {
  const config = inference.config;
  const V = config.vocabSize;
  const probabilities = new Float32Array(prompts.length * V);
  const distinct = distinctPrompts(prompts, groups.count > 1 ? groups.groupOf : undefined);
  const budget = groups.prefillTokenBudget(scoreTokenBudgetFor(config));
  const rowsPerRun = Math.max(1, Math.floor(budget / P));
  for (let first = 0; first < distinct.prompts.length; first += rowsPerRun) {
    const group = packRows(distinct.prompts.slice(first, first + rowsPerRun), 'left', P);
    const targets = distinct.rows.slice(first, first + group.rows);
    const out = await inference.forward(
      {
        tokens: group.tokens,
        rows: group.rows,
        length: P,
        ...ropeFeeds(group.positions, group.rows, P, headDim(config), config.ropeTheta),
        bias: promptBias(group, 1),
        headRows: Int32Array.from({ length: group.rows }, (_, b) => b * P + P - 1),
        invTemperature: groups.inverseTemperatures(targets.map((rows) => at(rows, 0, 'prompt rows'))),
        adapterRows: groups.counts(targets.map((rows) => at(rows, 0, 'prompt rows'))),
      },
      fetches,
    );
    cache.write(out, targets, { tokens: P, start: 0 });
    const last = entry(out, 'probabilities', 'run output').data as Float32Array;
    targets.forEach((rows, r) => {
      for (const row of rows) probabilities.set(last.subarray(r * V, (r + 1) * V), row * V);
    });
  }
  return probabilities;
}

/**
 * The batch rows a decode run carries (run row r is batch row `rows[r]`): all of them at first;
 * once a quarter of those carried have stopped (a stop token or string), the cache, bias and feeds
 * keep only the rest, so finished rows stop costing compute.
 */
class LiveRows {
  rows: number[];
  bias: DecodeBias;
  tokens: Int32Array;
  positions: Int32Array;
  headRows: Int32Array;
  eachRow: number[][];
  /** Each carried row's inverse temperature (its group's). */
  invTemperature: Float32Array;

  constructor(
    private readonly offsets: readonly number[],
    rows: number[],
    groups: SamplingGroups,
  ) {
    this.rows = rows;
    this.bias = new DecodeBias(
      rows.map((b) => at(offsets, b)),
      MASKED,
    );
    this.tokens = new Int32Array(rows.length);
    this.positions = new Int32Array(rows.length);
    this.headRows = Int32Array.from(rows.keys());
    this.eachRow = rows.map((_, r) => [r]);
    this.invTemperature = groups.inverseTemperatures(rows);
  }

  /** The rows still running, compacted when at most 3/4 of the carried ones are (null: unchanged). */
  compacted(groups: SamplingGroups, step: number, cache: DecodeCache, filled: number): LiveRows | null {
    const keep = this.rows.flatMap((b, r) => (groups.running(b, step) ? [r] : []));
    if (keep.length === 0 || keep.length > 0.75 * this.rows.length) return null;
    cache.keepRows(keep);
    const next = new LiveRows(
      this.offsets,
      keep.map((r) => at(this.rows, r)),
      groups,
    );
    next.bias.reset(cache.slots, filled);
    return next;
  }

  /** This step's feeds from the sampled batch tokens; position = slot − left padding. */
  feed(sampled: Int32Array, slot: number): void {
    this.rows.forEach((b, r) => {
      this.tokens[r] = at(sampled, b);
      this.positions[r] = slot - at(this.offsets, b);
    });
  }

  /** Run probabilities [rows, V] into their batch rows of `batch` [B, V]. */
  scatter(run: Float32Array, batch: Float32Array, vocab: number): void {
    this.rows.forEach((b, r) => {
      batch.set(run.subarray(r * vocab, (r + 1) * vocab), b * vocab);
    });
  }
}

/** Batched sampling of `prompts` with `options` (the module comment). */
export async function generateOnOnnx(
  inference: InferenceRuns,
  prompts: readonly (readonly number[])[],
  options: GenerateOptions,
): Promise<GeneratedRow[]> {
  return at(await generateGroupsOnOnnx(inference, [{ prompts, options }]), 0, 'groups');
}

/**
 * Several groups of prompts in one batch (rows in group order), each sampled with its own options
 * as `generateOnOnnx(inference, group.prompts, group.options)` would (sampling-groups.ts); each run
 * says how many of its rows each group has (`adapterRows`: on a grouped session, the adapter sets).
 */
export async function generateGroupsOnOnnx(
  inference: InferenceRuns,
  sampling: readonly SamplingGroup[],
): Promise<GeneratedRow[][]> {
  const config = inference.config;
  const prompts = sampling.flatMap((group) => group.prompts);
  const groups = new SamplingGroups(sampling, config);
  const B = prompts.length;
  const maxNew = groups.maxNew;
  if (B === 0 || maxNew === 0) return groups.results(false);
  const hd = headDim(config);
  const V = config.vocabSize;
  const fetches = [
    'probabilities',
    ...Array.from({ length: config.numLayers }, (_, i) => [keyOutputName(i), valueOutputName(i)]).flat(),
  ];
  const packed = packRows(prompts, 'left');
  const P = packed.length;
  const shape = { layers: config.numLayers, rows: B, kvHeads: config.numKvHeads, headDimension: hd };
  // Slot P + s holds the keys/values of the token sampled at step s (the last one is never run).
  const maxSlots = Math.max(1, P + maxNew - 1);
  const cache = new DecodeCache(shape, Math.min(maxSlots, P + CACHE_CHUNK), maxSlots);
  let probabilities = await prefill(inference, prompts, { P, cache, fetches, groups });
  const token = new Int32Array(B);
  let live = new LiveRows(packed.offsets, [...prompts.keys()], groups);
  live.bias.reset(cache.slots, P);
  for (let step = 0; step < maxNew; step++) {
    if (groups.sample(step, probabilities, token, V) === 0) break;
    await yieldToEventLoop();
    // The previous token's keys/values are in slot P + step − 1 (the prompt's for step 0).
    if (cache.ensure(P + step)) live.bias.reset(cache.slots, P + step);
    else if (step > 0) live.bias.open(P + step - 1);
    live = live.compacted(groups, step, cache, P + step) ?? live;
    live.feed(token, P + step);
    const A = live.rows.length;
    const out = await inference.forward(
      {
        tokens: live.tokens,
        rows: A,
        length: 1,
        ...ropeFeeds(live.positions, A, 1, hd, config.ropeTheta),
        bias: { dtype: 'float32', shape: [A, 1, 1, cache.slots + 1], data: live.bias.data },
        headRows: live.headRows,
        invTemperature: live.invTemperature,
        pastKeys: cache.keys,
        pastValues: cache.values,
        cacheSlots: cache.slots,
        adapterRows: groups.counts(live.rows),
      },
      fetches,
    );
    cache.write(out, live.eachRow, { tokens: 1, start: P + step });
    const runProbabilities = entry(out, 'probabilities', 'run output').data as Float32Array;
    if (A === B) probabilities = runProbabilities;
    else live.scatter(runProbabilities, probabilities, V);
  }
  return groups.results();
}
