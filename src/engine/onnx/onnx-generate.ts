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
import { Rng } from '../../core/rng.ts';
import { headDim } from '../../model/config.ts';
import { hitsStopString, yieldToEventLoop, type GeneratedRow, type GenerateOptions } from '../../model/generate.ts';
import { sampleToken } from '../../model/sampling.ts';
import { MASKED, packRows, promptBias, ropeFeeds } from './feeds.ts';
import { keyOutputName, valueOutputName } from './model-graph.ts';
import type { OnnxInference } from './onnx-inference.ts';

interface Cache {
  keys: Float32Array[];
  values: Float32Array[];
  slots: number;
}

/** Writes new keys/values [B, KV, T, hd] into cache slots [start, start + T). */
function writeCache(cache: Cache, layer: number, keys: Float32Array, values: Float32Array, rowsTimesHeads: number, tokens: number, start: number, hd: number): void {
  for (let r = 0; r < rowsTimesHeads; r++) {
    const from = r * tokens * hd;
    const to = (r * cache.slots + start) * hd;
    cache.keys[layer]!.set(keys.subarray(from, from + tokens * hd), to);
    cache.values[layer]!.set(values.subarray(from, from + tokens * hd), to);
  }
}

function checkPrompts(prompts: readonly (readonly number[])[], options: GenerateOptions, maxSeqLen: number): number {
  if (prompts.some((p) => p.length === 0)) throw new InvalidArgumentError('every prompt needs at least one token');
  if ((options.stopStrings?.length ?? 0) > 0 && options.decode === undefined) {
    throw new InvalidArgumentError('stopStrings need a decode function to read the generated text');
  }
  const longest = Math.max(...prompts.map((p) => p.length));
  if (longest >= maxSeqLen) throw new InvalidArgumentError(`a prompt of ${longest} tokens leaves no room in the context window of ${maxSeqLen}`);
  return longest;
}

export async function generateOnOnnx(inference: OnnxInference, prompts: readonly (readonly number[])[], options: GenerateOptions): Promise<GeneratedRow[]> {
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
  const fetches = ['logits', ...Array.from({ length: layers }, (_, i) => [keyOutputName(i), valueOutputName(i)]).flat()];

  // Prefill: the left-padded prompts, logits at each row's last position.
  const packed = packRows(prompts, 'left');
  const P = packed.length;
  const slots = Math.max(1, P + maxNew - 1);
  const cache: Cache = {
    keys: Array.from({ length: layers }, () => new Float32Array(B * KV * slots * hd)),
    values: Array.from({ length: layers }, () => new Float32Array(B * KV * slots * hd)),
    slots,
  };
  const prefill = await inference.forward(
    {
      tokens: packed.tokens,
      rows: B,
      length: P,
      ...ropeFeeds(packed.positions, B, P, hd, config.ropeTheta),
      bias: promptBias(packed, 1),
      headRows: Int32Array.from({ length: B }, (_, b) => b * P + P - 1),
    },
    fetches,
  );
  for (let i = 0; i < layers; i++) {
    writeCache(cache, i, prefill[keyOutputName(i)]!.data as Float32Array, prefill[valueOutputName(i)]!.data as Float32Array, B * KV, P, 0, hd);
  }
  let logits = prefill.logits!.data as Float32Array;

  const sampleOptions = { temperature: options.temperature ?? 1, topP: options.topP ?? 1 };
  const rng = new Rng(options.seed ?? 0);
  const stopTokens = new Set(options.stopTokens ?? []);
  const sampledVocab = Math.min(V, options.maxTokenId ?? V);
  const scratch = new Float64Array(V);
  const order = new Int32Array(V);
  const done = new Array<boolean>(B).fill(false);
  let active = B;
  const token = new Int32Array(B);
  const positions = new Int32Array(B);
  const width = slots + 1;
  const bias = new Float32Array(B * width).fill(MASKED);
  for (let b = 0; b < B; b++) {
    for (let s = packed.offsets[b]!; s < P; s++) bias[b * width + s] = 0;
    bias[b * width + slots] = 0; // the new token itself
  }
  const headRows = Int32Array.from({ length: B }, (_, b) => b);
  for (let step = 0; step < maxNew && active > 0; step++) {
    for (let b = 0; b < B; b++) {
      if (done[b]) {
        token[b] = 0;
        continue;
      }
      const sampled = sampleToken(logits, b * V, V, sampleOptions, rng, scratch, order, sampledVocab);
      token[b] = sampled.token;
      const row = rows[b]!;
      row.tokens.push(sampled.token);
      row.logprobs.push(sampled.logprob);
      options.onToken?.(b, sampled.token, sampled.logprob);
      if (stopTokens.has(sampled.token) || hitsStopString(row.tokens, options)) {
        row.finishReason = 'stop';
        done[b] = true;
        active--;
      }
    }
    if (active === 0 || step === maxNew - 1) break;
    await yieldToEventLoop();
    // The previous token's keys/values are in slot P + step − 1 (the prompt's for step 0).
    if (step > 0) for (let b = 0; b < B; b++) bias[b * width + P + step - 1] = 0;
    for (let b = 0; b < B; b++) positions[b] = P + step - packed.offsets[b]!;
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
    for (let i = 0; i < layers; i++) {
      writeCache(cache, i, out[keyOutputName(i)]!.data as Float32Array, out[valueOutputName(i)]!.data as Float32Array, B * KV, 1, P + step, hd);
    }
    logits = out.logits!.data as Float32Array;
  }
  if (options.decode) for (const row of rows) row.text = options.decode(row.tokens);
  return rows;
}
