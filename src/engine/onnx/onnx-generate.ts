/**
 * Batched sampling on onnxruntime with a host-side KV cache, the peer of model/generate.ts:
 * prompts left-padded to a shared length P (positions per row, padding masked), one prefill run,
 * then ONE run per decoded token for the whole batch. Sampling is model/sampling.ts's
 * `sampleToken`, with the same seeded RNG visited in the same row order, so a seed gives the same
 * tokens as the jax-js sampler as far as float rounding allows.
 *
 * The cache is a fixed host array per layer, [B, KV, Smax, hd] with Smax = P + maxNew − 1: each
 * run returns only the new tokens' keys/values, which are written into their slot here; the
 * attention bias masks the slots not yet written. No cache is copied inside the graph.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at, entry } from '../../core/indexing.ts';
import { headDim } from '../../model/config.ts';
import { yieldToEventLoop, type GeneratedRow, type GenerateOptions } from '../../model/generate.ts';
import { RowSampler } from '../../model/row-sampler.ts';
import { MASKED, packRows, promptBias, ropeFeeds } from './feeds.ts';
import { keyOutputName, valueOutputName } from './model-graph.ts';
import type { OnnxInference } from './onnx-inference.ts';

interface Cache {
  keys: Float32Array[];
  values: Float32Array[];
  slots: number;
}

/** Writes new keys/values [rows, KV, T, hd] of cache rows from `firstRow` on into slots [start, start + T). */
function writeCache(
  cache: Cache,
  layer: number,
  out: Record<string, { data: unknown }>,
  place: { firstRow: number; rowsTimesHeads: number; tokens: number; start: number; hd: number; kvHeads: number },
): void {
  const keys = entry(out, keyOutputName(layer), 'run output').data as Float32Array;
  const values = entry(out, valueOutputName(layer), 'run output').data as Float32Array;
  const cachedKeys = at(cache.keys, layer, 'cache.keys');
  const cachedValues = at(cache.values, layer, 'cache.values');
  const { tokens, hd } = place;
  for (let r = 0; r < place.rowsTimesHeads; r++) {
    const from = r * tokens * hd;
    const to = ((place.firstRow * place.kvHeads + r) * cache.slots + place.start) * hd;
    cachedKeys.set(keys.subarray(from, from + tokens * hd), to);
    cachedValues.set(values.subarray(from, from + tokens * hd), to);
  }
}

function checkPrompts(prompts: readonly (readonly number[])[], options: GenerateOptions, maxSeqLen: number): number {
  if (prompts.some((p) => p.length === 0)) throw new InvalidArgumentError('every prompt needs at least one token');
  if ((options.stopStrings?.length ?? 0) > 0 && options.decode === undefined) {
    throw new InvalidArgumentError('stopStrings need a decode function to read the generated text');
  }
  const longest = Math.max(...prompts.map((p) => p.length));
  if (longest >= maxSeqLen)
    throw new InvalidArgumentError(
      `a prompt of ${longest} tokens leaves no room in the context window of ${maxSeqLen}`,
    );
  return longest;
}

/** Padded prompt tokens (rows × P) per prefill run: attention over the prompt is [rows, H, P, P + 1]. */
const PREFILL_TOKEN_BUDGET = 4096;

/**
 * Runs the prompts, left-padded to P, in row groups of at most `budget` padded tokens; writes
 * their keys/values into cache slots [0, P) and returns the last positions' logits [B, V].
 */
async function prefill(
  inference: OnnxInference,
  prompts: readonly (readonly number[])[],
  P: number,
  cache: Cache,
  fetches: string[],
  budget: number,
): Promise<Float32Array> {
  const config = inference.config;
  const hd = headDim(config);
  const V = config.vocabSize;
  const logits = new Float32Array(prompts.length * V);
  const rowsPerRun = Math.max(1, Math.floor(budget / P));
  for (let first = 0; first < prompts.length; first += rowsPerRun) {
    const group = packRows(prompts.slice(first, first + rowsPerRun), 'left', P);
    const rows = group.rows;
    const out = await inference.forward(
      {
        tokens: group.tokens,
        rows,
        length: P,
        ...ropeFeeds(group.positions, rows, P, hd, config.ropeTheta),
        bias: promptBias(group, 1),
        headRows: Int32Array.from({ length: rows }, (_, b) => b * P + P - 1),
      },
      fetches,
    );
    const place = {
      firstRow: first,
      rowsTimesHeads: rows * config.numKvHeads,
      tokens: P,
      start: 0,
      hd,
      kvHeads: config.numKvHeads,
    };
    for (let i = 0; i < config.numLayers; i++) writeCache(cache, i, out, place);
    logits.set(entry(out, 'logits', 'run output').data as Float32Array, first * V);
  }
  return logits;
}

export async function generateOnOnnx(
  inference: OnnxInference,
  prompts: readonly (readonly number[])[],
  options: GenerateOptions,
): Promise<GeneratedRow[]> {
  const config = inference.config;
  const B = prompts.length;
  if (B === 0) return [];
  const longest = checkPrompts(prompts, options, config.maxSeqLen);
  const maxNew = Math.max(0, Math.min(options.maxNewTokens, config.maxSeqLen - longest));
  const rows: GeneratedRow[] = prompts.map(() => ({ tokens: [], logprobs: [], text: '', finishReason: 'length' }));
  if (maxNew === 0) return rows;
  const hd = headDim(config);
  const KV = config.numKvHeads;
  const V = config.vocabSize;
  const layers = config.numLayers;
  const fetches = [
    'logits',
    ...Array.from({ length: layers }, (_, i) => [keyOutputName(i), valueOutputName(i)]).flat(),
  ];

  const packed = packRows(prompts, 'left');
  const P = packed.length;
  const slots = Math.max(1, P + maxNew - 1);
  const cache: Cache = {
    keys: Array.from({ length: layers }, () => new Float32Array(B * KV * slots * hd)),
    values: Array.from({ length: layers }, () => new Float32Array(B * KV * slots * hd)),
    slots,
  };
  let logits = await prefill(inference, prompts, P, cache, fetches, options.prefillTokenBudget ?? PREFILL_TOKEN_BUDGET);

  const sampler = new RowSampler(rows, options, V);
  const token = new Int32Array(B);
  const positions = new Int32Array(B);
  const width = slots + 1;
  const bias = new Float32Array(B * width).fill(MASKED);
  for (let b = 0; b < B; b++) {
    for (let s = at(packed.offsets, b); s < P; s++) bias[b * width + s] = 0;
    bias[b * width + slots] = 0; // the new token itself
  }
  const headRows = Int32Array.from({ length: B }, (_, b) => b);
  for (let step = 0; step < maxNew; step++) {
    const active = sampler.sample(logits, token);
    if (active === 0 || step === maxNew - 1) break;
    await yieldToEventLoop();
    // The previous token's keys/values are in slot P + step − 1 (the prompt's for step 0).
    if (step > 0) for (let b = 0; b < B; b++) bias[b * width + P + step - 1] = 0;
    for (let b = 0; b < B; b++) positions[b] = P + step - at(packed.offsets, b);
    const out = await inference.forward(
      {
        tokens: token,
        rows: B,
        length: 1,
        ...ropeFeeds(positions, B, 1, hd, config.ropeTheta),
        bias: { dtype: 'float32', shape: [B, 1, 1, width], data: bias },
        headRows,
        pastKeys: cache.keys,
        pastValues: cache.values,
        cacheSlots: slots,
      },
      fetches,
    );
    for (let i = 0; i < layers; i++)
      writeCache(cache, i, out, { firstRow: 0, rowsTimesHeads: B * KV, tokens: 1, start: P + step, hd, kvHeads: KV });
    logits = entry(out, 'logits', 'run output').data as Float32Array;
  }
  if (options.decode) for (const row of rows) row.text = options.decode(row.tokens);
  return rows;
}
