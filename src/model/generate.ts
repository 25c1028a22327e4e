/**
 * Batched sampling with a KV cache.
 *
 * Prompts of different lengths are left-padded to a shared length P, so every row writes its next
 * key/value into the same cache slot; RoPE positions are per row (counted from the row's first real
 * token) and padding slots are masked out of attention. The cache has a fixed length (a bucket of
 * P + max new tokens) so one compiled decode step serves the whole generation: a new key/value is
 * written with a one-hot slot mask, cache·(1 − e_s) + kv·e_s.
 *
 * Each sampled token's log-prob is taken under the temperature-scaled model distribution, which
 * `TransformerModel.score(…, { temperature })` reproduces.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { Rng } from '../core/rng.ts';
import { numpy as np, jit, tree, blockUntilReady, type JaxArray } from './jax.ts';
import { headDim, type ModelConfig } from './config.ts';
import { attend, causalBias, lmLogits, mlp, projectQkv, rmsNorm, type DeviceParams } from './transformer.ts';
import { bucketLength } from './batch.ts';
import { ropeTables } from './rope.ts';
import { sampleToken } from './sampling.ts';
import type { TransformerModel } from './model.ts';

export interface GenerateOptions {
  maxNewTokens: number;
  /** 0 = greedy. Default 1. */
  temperature?: number;
  /** Nucleus sampling mass; 1 = off. */
  topP?: number;
  /** Generation of a row ends after it emits one of these ids (the id is kept). */
  stopTokens?: readonly number[];
  /** Generation of a row ends once its text contains one of these (needs `decode`). */
  stopStrings?: readonly string[];
  /** Decoder for stop strings and the returned text. */
  decode?: (tokens: readonly number[]) => string;
  seed?: number;
}

export interface GeneratedRow {
  /** Generated ids (the stop token included). */
  tokens: number[];
  /** log π(token) of each generated id. */
  logprobs: number[];
  text: string;
  finishReason: 'stop' | 'length';
}

interface Caches {
  k: JaxArray[]; // per layer [B, KV, Tc, hd]
  v: JaxArray[];
}

/** Compiled prefill and decode functions, one pair per model (jax-js caches per input shape). */
const compiledByModel = new WeakMap<TransformerModel, { prefill: (...a: any[]) => any; decode: (...a: any[]) => any }>();

function compiledFor(model: TransformerModel) {
  let fns = compiledByModel.get(model);
  if (fns === undefined) {
    const config = model.config;
    fns = {
      prefill: jit(((params: DeviceParams, tokens: JaxArray, fullMask: JaxArray, cos: JaxArray, sin: JaxArray) =>
        prefill(config, params, tokens, fullMask, cos, sin)) as any) as (...a: any[]) => any,
      decode: jit(((params: DeviceParams, caches: Caches, token: JaxArray, fullMask: JaxArray, cos: JaxArray, sin: JaxArray, slot: JaxArray) =>
        decodeStep(config, params, caches, token, fullMask, cos, sin, slot)) as any) as (...a: any[]) => any,
    };
    compiledByModel.set(model, fns);
  }
  return fns;
}

/** Runs the prompt [B·P] through the network; returns last-position logits [B, V] and the caches. */
function prefill(config: ModelConfig, params: DeviceParams, tokens: JaxArray, fullMask: JaxArray, cos: JaxArray, sin: JaxArray) {
  const [B, Tc] = fullMask.shape as [number, number];
  const P = tokens.shape[0]! / B;
  const hd = headDim(config);
  const bias = causalBias(fullMask.slice([], [0, P]), P); // [B, 1, P, P]
  const pad = (x: JaxArray): JaxArray =>
    Tc === P ? x : np.concatenate([x, np.zeros([B, config.numKvHeads, Tc - P, hd])], 2); // [B, KV, Tc, hd]
  const caches: Caches = { k: [], v: [] };
  let x = np.take(params.embed!.ref, tokens, 0); // [B·P, D]
  for (let i = 0; i < config.numLayers; i++) {
    const p = `layers.${i}.`;
    const h = rmsNorm(x.ref, params[p + 'attnNorm']!, config.rmsNormEps);
    const { q, k, v } = projectQkv(params, p, h, config, { batch: B, queryLen: P, cos: cos.ref, sin: sin.ref });
    caches.k.push(pad(k.ref));
    caches.v.push(pad(v.ref));
    x = x.add(attend(params, p, q, k, v, bias.ref, config, B, P));
    x = x.add(mlp(params, p, rmsNorm(x.ref, params[p + 'mlpNorm']!, config.rmsNormEps)));
  }
  cos.dispose();
  sin.dispose();
  bias.dispose();
  disposeUnused(params, config);
  const last = x.reshape([B, P, config.hiddenSize]).slice([], P - 1).reshape([B, config.hiddenSize]); // [B, D]
  const logits = lmLogits(params, config, rmsNorm(last, params.finalNorm!, config.rmsNormEps)); // [B, V]
  return { logits, caches };
}

/** One token per row at shared slot s; token [B]; fullMask [B, Tc] (1 = attendable); slot [Tc] one-hot. */
function decodeStep(
  config: ModelConfig,
  params: DeviceParams,
  caches: Caches,
  token: JaxArray,
  fullMask: JaxArray,
  cos: JaxArray,
  sin: JaxArray,
  slot: JaxArray,
) {
  const [B, Tc] = fullMask.shape as [number, number];
  const bias = fullMask.reshape([B, 1, 1, Tc]).sub(1).mul(1e9); // [B, 1, 1, Tc]
  const write = slot.reshape([1, 1, Tc, 1]); // [1, 1, Tc, 1]
  const keep = np.subtract(1, write.ref); // [1, 1, Tc, 1]
  const next: Caches = { k: [], v: [] };
  let x = np.take(params.embed!.ref, token, 0); // [B, D]
  for (let i = 0; i < config.numLayers; i++) {
    const p = `layers.${i}.`;
    const h = rmsNorm(x.ref, params[p + 'attnNorm']!, config.rmsNormEps);
    const { q, k, v } = projectQkv(params, p, h, config, { batch: B, queryLen: 1, cos: cos.ref, sin: sin.ref });
    const cacheK = caches.k[i]!.mul(keep.ref).add(k.mul(write.ref)); // [B, KV, Tc, hd]
    const cacheV = caches.v[i]!.mul(keep.ref).add(v.mul(write.ref)); // [B, KV, Tc, hd]
    next.k.push(cacheK.ref);
    next.v.push(cacheV.ref);
    x = x.add(attend(params, p, q, cacheK, cacheV, bias.ref, config, B, 1));
    x = x.add(mlp(params, p, rmsNorm(x.ref, params[p + 'mlpNorm']!, config.rmsNormEps)));
  }
  for (const a of [cos, sin, bias, write, keep]) a.dispose();
  disposeUnused(params, config);
  const logits = lmLogits(params, config, rmsNorm(x, params.finalNorm!, config.rmsNormEps)); // [B, V]
  return { logits, caches: next };
}

/** The sampler does not read the value head; release it so ownership balances. */
function disposeUnused(params: DeviceParams, config: ModelConfig): void {
  if (config.valueHead) {
    params['valueHead.w']!.dispose();
    params['valueHead.b']!.dispose();
  }
}

export async function generate(
  model: TransformerModel,
  prompts: readonly (readonly number[])[],
  options: GenerateOptions,
): Promise<GeneratedRow[]> {
  const config = model.config;
  const B = prompts.length;
  if (B === 0) return [];
  if (prompts.some((p) => p.length === 0)) throw new InvalidArgumentError('every prompt needs at least one token');
  if ((options.stopStrings?.length ?? 0) > 0 && options.decode === undefined) {
    throw new InvalidArgumentError('stopStrings need a decode function to read the generated text');
  }
  const longest = Math.max(...prompts.map((p) => p.length));
  const P = bucketLength(longest, config.maxSeqLen);
  if (longest >= config.maxSeqLen) {
    throw new InvalidArgumentError(`a prompt of ${longest} tokens leaves no room in the context window of ${config.maxSeqLen}`);
  }
  const maxNew = Math.max(0, Math.min(options.maxNewTokens, config.maxSeqLen - P));
  const Tc = bucketLength(P + maxNew, config.maxSeqLen);
  const half = headDim(config) / 2;
  const temperature = options.temperature ?? 1;
  const sampleOptions = { temperature, topP: options.topP ?? 1 };
  const rng = new Rng(options.seed ?? 0);
  const stopTokens = new Set(options.stopTokens ?? []);
  const V = config.vocabSize;

  // Host state: left-padded prompts, the attendable-slot mask, per-row position offsets.
  const padLeft = prompts.map((p) => P - p.length);
  const promptTokens = new Int32Array(B * P);
  const fullMask = new Float32Array(B * Tc);
  const promptPositions = new Int32Array(B * P);
  prompts.forEach((prompt, b) => {
    for (let t = 0; t < prompt.length; t++) {
      promptTokens[b * P + padLeft[b]! + t] = prompt[t]!;
      fullMask[b * Tc + padLeft[b]! + t] = 1;
    }
    for (let t = 0; t < P; t++) promptPositions[b * P + t] = Math.max(0, t - padLeft[b]!);
  });
  const { prefill: prefillFn, decode: decodeFn } = compiledFor(model);
  const rope = ropeTables(promptPositions, 2 * half, config.ropeTheta);
  const params = model.deviceParams();
  // The decode loop reads logits with dataSync(): jax-js then runs those kernels synchronously on
  // this thread instead of posting each one to the worker pool, which for small per-token kernels
  // costs more than it saves (measured in bench/engine.ts). Sync dispatch needs its inputs settled.
  await blockUntilReady(params);
  const first = prefillFn(
    tree.ref(params),
    np.array(promptTokens),
    np.array(fullMask).reshape([B, Tc]),
    np.array(rope.cos).reshape([B, 1, P, half]),
    np.array(rope.sin).reshape([B, 1, P, half]),
  ) as { logits: JaxArray; caches: Caches };
  let logits: JaxArray | null = first.logits;
  let caches = first.caches;

  const rows: GeneratedRow[] = prompts.map(() => ({ tokens: [], logprobs: [], text: '', finishReason: 'length' }));
  const done = new Array<boolean>(B).fill(false);
  let active = B;
  const scratch = new Float64Array(V);
  const order = new Int32Array(V);
  const token = new Int32Array(B);
  const positions = new Int32Array(B);
  const slot = new Float32Array(Tc);
  try {
    for (let step = 0; step < maxNew && active > 0; step++) {
      const hostLogits = logits!.dataSync() as Float32Array; // [B, V] (consumes the array)
      logits = null;
      for (let b = 0; b < B; b++) {
        if (done[b]) {
          token[b] = 0;
          continue;
        }
        const sampled = sampleToken(hostLogits, b * V, V, sampleOptions, rng, scratch, order);
        token[b] = sampled.token;
        const row = rows[b]!;
        row.tokens.push(sampled.token);
        row.logprobs.push(sampled.logprob);
        if (stopTokens.has(sampled.token) || hitsStopString(row.tokens, options)) {
          row.finishReason = 'stop';
          done[b] = true;
          active--;
        }
      }
      if (active === 0 || step === maxNew - 1) break;
      const s = P + step; // the slot the sampled tokens go to
      for (let b = 0; b < B; b++) {
        fullMask[b * Tc + s] = 1;
        positions[b] = s - padLeft[b]!;
      }
      slot.fill(0);
      slot[s] = 1;
      const stepRope = ropeTables(positions, 2 * half, config.ropeTheta);
      const out = decodeFn(
        tree.ref(params),
        caches,
        np.array(token),
        np.array(fullMask).reshape([B, Tc]),
        np.array(stepRope.cos).reshape([B, 1, 1, half]),
        np.array(stepRope.sin).reshape([B, 1, 1, half]),
        np.array(slot),
      ) as { logits: JaxArray; caches: Caches };
      logits = out.logits;
      caches = out.caches;
    }
  } finally {
    tree.dispose(caches);
    logits?.dispose();
  }
  if (options.decode) for (const row of rows) row.text = options.decode(row.tokens);
  return rows;
}

function hitsStopString(tokens: readonly number[], options: GenerateOptions): boolean {
  if (!options.stopStrings || options.stopStrings.length === 0) return false;
  // Only the tail can newly contain a stop string; decode a window long enough for the longest.
  const longest = Math.max(...options.stopStrings.map((s) => s.length));
  const tail = options.decode!(tokens.slice(-4 * longest - 4));
  return options.stopStrings.some((s) => tail.includes(s));
}
