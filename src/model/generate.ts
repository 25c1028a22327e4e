/**
 * Batched sampling with a KV cache.
 *
 * Prompts of different lengths are left-padded to a shared length P, so every row writes its next
 * key/value into the same cache slot; RoPE positions are per row (counted from the row's first real
 * token) and padding slots are masked out of attention.
 *
 * Shapes stay fixed so one compiled decode step serves the whole generation, and the big cache is
 * not rewritten per token (jax-js has no in-place update; a one-hot write of a [B, KV, T, hd]
 * cache cost ~0.35–0.74 ms per layer and dominated decoding). Instead:
 *   main cache   [B, KV, Tc, hd]  the prompt and all finished chunks, read-only within a chunk;
 *   recent chunk [B, KV, C, hd]   the last ≤ C tokens, written per token with a one-hot slot mask;
 * attention runs over both (one softmax over the concatenated scores), and every C tokens the chunk
 * is merged into the main cache with a placement matmul, main + E·chunk (E [Tc, C] one-hot).
 *
 * Each sampled token's log-prob is taken under the temperature-scaled model distribution, which
 * `TransformerModel.score(…, { temperature })` reproduces.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { Rng } from '../core/rng.ts';
import { numpy as np, jit, tree, blockUntilReady, type JaxArray } from './jax.ts';
import { headDim, type ModelConfig } from './config.ts';
import { attend, causalBias, lmLogits, mlp, projectQkv, rmsNorm, type DeviceParams } from './transformer.ts';
import { linear } from './lora.ts';
import { nn } from './jax.ts';
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
  /**
   * Only ids below this are sampled (a tokenizer smaller than the model's vocabulary). Log-probs
   * stay those of the full distribution, as `score()` computes them.
   */
  maxTokenId?: number;
  /** Decoder for stop strings and the returned text. */
  decode?: (tokens: readonly number[]) => string;
  seed?: number;
  /** Padded prompt tokens per prefill call (bounds memory); default 4096. */
  prefillTokenBudget?: number;
  /** Run decode kernels on the worker pool; default: from 32 rows on. */
  decodeOnWorkers?: boolean;
  /** Called with each sampled id as it is sampled (streaming servers). */
  onToken?: (row: number, token: number, logprob: number) => void;
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
  k: JaxArray[]; // per layer [B, KV, Tc, hd] (main) or [B, KV, C, hd] (recent chunk)
  v: JaxArray[];
}

/** Batches of at least this many rows decode on the worker pool (see generate()). */
const WORKER_ROWS = 32;

/** Padded prompt tokens (rows × P) per prefill call. */
const PREFILL_TOKEN_BUDGET = 4096;

/** Prompts are left-padded to a multiple of this (a multiple of CHUNK); few lengths, few shapes. */
const PROMPT_BUCKET = 32;

/** Generation batches are padded to a multiple of this many rows. */
const ROW_MULTIPLE = 8;

/** Tokens per recent chunk; prompts are padded to multiples of it (see batch.ts LENGTH_BUCKET). */
const CHUNK = 16;

/** Compiled prefill and decode functions, one pair per model (jax-js caches per input shape). */
type Compiled = (...a: any[]) => any;
const compiledByModel = new WeakMap<TransformerModel, { prefill: Compiled; decode: Compiled; merge: Compiled }>();

function compiledFor(model: TransformerModel) {
  let fns = compiledByModel.get(model);
  if (fns === undefined) {
    const config = model.config;
    fns = {
      prefill: jit(((params: DeviceParams, tokens: JaxArray, promptMask: JaxArray, cos: JaxArray, sin: JaxArray, cacheSlots: JaxArray) =>
        prefill(config, params, tokens, promptMask, cos, sin, cacheSlots)) as any) as Compiled,
      decode: jit(((params: DeviceParams, main: Caches, recent: Caches, token: JaxArray, mask: JaxArray, cos: JaxArray, sin: JaxArray, slot: JaxArray) =>
        decodeStep(config, params, main, recent, token, mask, cos, sin, slot)) as any) as Compiled,
      merge: jit(((main: Caches, recent: Caches, place: JaxArray) => mergeChunk(main, recent, place)) as any) as Compiled,
    };
    compiledByModel.set(model, fns);
  }
  return fns;
}

/**
 * Runs the prompt [B·P] through the network (promptMask [B, P]); returns last-position logits
 * [B, V] and the main caches, zero-padded to Tc = cacheSlots.shape[0] slots.
 */
function prefill(
  config: ModelConfig,
  params: DeviceParams,
  tokens: JaxArray,
  promptMask: JaxArray,
  cos: JaxArray,
  sin: JaxArray,
  cacheSlots: JaxArray,
) {
  const [B, P] = promptMask.shape as [number, number];
  const Tc = cacheSlots.shape[0]!;
  cacheSlots.dispose();
  const hd = headDim(config);
  const bias = causalBias(promptMask, P); // [B, 1, P, P]
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

/**
 * One token per row. main [B,KV,Tc,hd] (read-only), recent [B,KV,C,hd]; token [B];
 * mask [B, Tc + C] (1 = attendable: main slots, then recent slots); slot [C] one-hot (where in the
 * recent chunk this token goes). Returns logits [B, V] and the updated recent chunk.
 */
function decodeStep(
  config: ModelConfig,
  params: DeviceParams,
  main: Caches,
  recent: Caches,
  token: JaxArray,
  mask: JaxArray,
  cos: JaxArray,
  sin: JaxArray,
  slot: JaxArray,
) {
  const [B, width] = mask.shape as [number, number];
  const C = slot.shape[0]!;
  const Tc = width - C;
  const hd = headDim(config);
  const KV = config.numKvHeads;
  const G = config.numHeads / KV;
  const bias = mask.reshape([B, 1, 1, width]).sub(1).mul(1e9); // [B, 1, 1, Tc + C]
  const write = slot.reshape([1, 1, C, 1]); // [1, 1, C, 1]
  const keep = np.subtract(1, write.ref); // [1, 1, C, 1]
  const next: Caches = { k: [], v: [] };
  let x = np.take(params.embed!.ref, token, 0); // [B, D]
  for (let i = 0; i < config.numLayers; i++) {
    const p = `layers.${i}.`;
    const h = rmsNorm(x.ref, params[p + 'attnNorm']!, config.rmsNormEps);
    const { q, k, v } = projectQkv(params, p, h, config, { batch: B, queryLen: 1, cos: cos.ref, sin: sin.ref });
    const recentK = recent.k[i]!.mul(keep.ref).add(k.mul(write.ref)); // [B, KV, C, hd]
    const recentV = recent.v[i]!.mul(keep.ref).add(v.mul(write.ref)); // [B, KV, C, hd]
    next.k.push(recentK.ref);
    next.v.push(recentV.ref);
    // Grouped query heads share their KV head without copying the cache: q as [B, KV, G, hd].
    const qg = q.reshape([B, KV, G, hd]);
    const scores = np
      .concatenate(
        [np.matmul(qg.ref, main.k[i]!.transpose([0, 1, 3, 2])), np.matmul(qg, recentK.transpose([0, 1, 3, 2]))],
        -1,
      ) // [B, KV, G, Tc + C]
      .mul(1 / Math.sqrt(hd))
      .add(bias.ref);
    const weights = nn.softmax(scores, -1); // [B, KV, G, Tc + C]
    const context = np
      .matmul(weights.ref.slice([], [], [], [0, Tc]), main.v[i]!)
      .add(np.matmul(weights.slice([], [], [], [Tc, Tc + C]), recentV)) // [B, KV, G, hd]
      .reshape([B, config.numHeads * hd]);
    x = x.add(linear(params, p + 'wo', context)); // [B, D] (with the LoRA update when the model has one)
    x = x.add(mlp(params, p, rmsNorm(x.ref, params[p + 'mlpNorm']!, config.rmsNormEps)));
  }
  for (const a of [cos, sin, bias, write, keep]) a.dispose();
  disposeUnused(params, config);
  const logits = lmLogits(params, config, rmsNorm(x, params.finalNorm!, config.rmsNormEps)); // [B, V]
  return { logits, recent: next };
}

/** main + E·recent per layer, E [Tc, C] placing the chunk at its slots (which are zero in main). */
function mergeChunk(main: Caches, recent: Caches, place: JaxArray): Caches {
  const merged: Caches = { k: [], v: [] };
  const [Tc, C] = place.shape as [number, number];
  place = place.reshape([1, 1, Tc, C]);
  for (let i = 0; i < main.k.length; i++) {
    merged.k.push(main.k[i]!.add(np.matmul(place.ref, recent.k[i]!)));
    merged.v.push(main.v[i]!.add(np.matmul(place.ref, recent.v[i]!)));
  }
  place.dispose();
  return merged;
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
  const realRows = prompts.length;
  if (realRows === 0) return [];
  // Rows are padded to a multiple of ROW_MULTIPLE with one-token filler prompts: fewer distinct
  // shapes to compile, and jax-js's allocator only reuses buffers of identical size classes.
  const B = Math.ceil(realRows / ROW_MULTIPLE) * ROW_MULTIPLE;
  prompts = [...prompts, ...Array.from({ length: B - realRows }, () => [0])];
  if (prompts.some((p) => p.length === 0)) throw new InvalidArgumentError('every prompt needs at least one token');
  if ((options.stopStrings?.length ?? 0) > 0 && options.decode === undefined) {
    throw new InvalidArgumentError('stopStrings need a decode function to read the generated text');
  }
  const longest = Math.max(...prompts.map((p) => p.length));
  const P = bucketLength(longest, config.maxSeqLen, PROMPT_BUCKET);
  if (longest >= config.maxSeqLen) {
    throw new InvalidArgumentError(`a prompt of ${longest} tokens leaves no room in the context window of ${config.maxSeqLen}`);
  }
  // Each row's positions count from its own first token, so a row may use the window up to
  // maxSeqLen − its own length; the shared cache may be longer than the window.
  const maxNew = Math.max(0, Math.min(options.maxNewTokens, config.maxSeqLen - longest));
  const chunks = Math.max(1, Math.ceil(maxNew / CHUNK));
  const Tc = P + (chunks - 1) * CHUNK; // main cache: prompt + every chunk but the last
  const half = headDim(config) / 2;
  const temperature = options.temperature ?? 1;
  const sampleOptions = { temperature, topP: options.topP ?? 1 };
  const rng = new Rng(options.seed ?? 0);
  const stopTokens = new Set(options.stopTokens ?? []);
  const V = config.vocabSize;
  const sampledVocab = Math.min(V, options.maxTokenId ?? V);

  // Host state: left-padded prompts, the attendable-slot mask [main Tc | recent C], positions.
  const padLeft = prompts.map((p) => P - p.length);
  const promptTokens = new Int32Array(B * P);
  const width = Tc + CHUNK;
  const mask = new Float32Array(B * width);
  const prefillMask = new Float32Array(B * P);
  const promptPositions = new Int32Array(B * P);
  prompts.forEach((prompt, b) => {
    for (let t = 0; t < prompt.length; t++) {
      promptTokens[b * P + padLeft[b]! + t] = prompt[t]!;
      prefillMask[b * P + padLeft[b]! + t] = 1;
      mask[b * width + padLeft[b]! + t] = 1;
    }
    for (let t = 0; t < P; t++) promptPositions[b * P + t] = Math.max(0, t - padLeft[b]!);
  });
  const { prefill: prefillFn, decode: decodeFn, merge: mergeFn } = compiledFor(model);
  const rope = ropeTables(promptPositions, 2 * half, config.ropeTheta);
  const params = model.deviceParams();
  // Narrow batches read logits with dataSync(): jax-js then runs those kernels synchronously on
  // this thread instead of posting each one to the worker pool, which for small per-token kernels
  // costs more than it saves (bench/engine.ts: 16 rows). From WORKER_ROWS rows on, the kernels are
  // big enough for the workers to pay (64 rows × 40-token prompts: 1,686 vs 1,400 tok/s).
  // Sync dispatch needs its inputs settled.
  const workerReads = options.decodeOnWorkers ?? B >= WORKER_ROWS;
  await blockUntilReady(params);
  // Prefill in row groups of at most PREFILL_TOKEN_BUDGET padded tokens: attention over the
  // prompt is [rows, H, P, P], so one call for a wide batch of long prompts would need gigabytes.
  const budget = options.prefillTokenBudget ?? PREFILL_TOKEN_BUDGET;
  const groupRows = Math.max(ROW_MULTIPLE, Math.floor(budget / P / ROW_MULTIPLE) * ROW_MULTIPLE);
  const parts: { logits: JaxArray; caches: Caches }[] = [];
  for (let start = 0; start < B; start += groupRows) {
    const rows = Math.min(groupRows, B - start);
    parts.push(
      prefillFn(
        tree.ref(params),
        np.array(promptTokens.slice(start * P, (start + rows) * P)),
        np.array(prefillMask.slice(start * P, (start + rows) * P)).reshape([rows, P]),
        np.array(rope.cos.slice(start * P * half, (start + rows) * P * half)).reshape([rows, 1, P, half]),
        np.array(rope.sin.slice(start * P * half, (start + rows) * P * half)).reshape([rows, 1, P, half]),
        np.zeros([Tc]),
      ) as { logits: JaxArray; caches: Caches },
    );
  }
  const first =
    parts.length === 1
      ? parts[0]!
      : {
          logits: np.concatenate(parts.map((p) => p.logits), 0),
          caches: {
            k: main0(parts, 'k', config.numLayers),
            v: main0(parts, 'v', config.numLayers),
          },
        };
  let logits: JaxArray | null = first.logits;
  let main = first.caches;
  const emptyChunk = (): Caches => ({
    k: Array.from({ length: config.numLayers }, () => np.zeros([B, config.numKvHeads, CHUNK, 2 * half])),
    v: Array.from({ length: config.numLayers }, () => np.zeros([B, config.numKvHeads, CHUNK, 2 * half])),
  });
  let recent = emptyChunk();

  const rows: GeneratedRow[] = prompts.map(() => ({ tokens: [], logprobs: [], text: '', finishReason: 'length' }));
  const done = Array.from({ length: B }, (_, b) => b >= realRows);
  let active = realRows;
  const scratch = new Float64Array(V);
  const order = new Int32Array(V);
  const token = new Int32Array(B);
  const positions = new Int32Array(B);
  const slot = new Float32Array(CHUNK);
  try {
    for (let step = 0; step < maxNew && active > 0; step++) {
      const hostLogits = (workerReads ? await logits!.data() : logits!.dataSync()) as Float32Array; // [B, V] (consumes the array)
      logits = null;
      for (let b = 0; b < B; b++) {
        if (done[b]) {
          token[b] = 0;
          continue;
        }
        const sampled = sampleToken(hostLogits, b * V, V, sampleOptions, rng, scratch, order, sampledVocab);
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
      // Between tokens the event loop runs (a server writes the streamed ids and answers other
      // requests meanwhile); the worker path already yields while it awaits its read.
      if (!workerReads) await yieldToEventLoop();
      const j = step % CHUNK; // where the sampled tokens go in the recent chunk
      if (j === 0 && step > 0) {
        // The chunk of slots [P + step − C, P + step) is full: merge it into the main cache.
        const start = P + step - CHUNK;
        const place = new Float32Array(Tc * CHUNK);
        for (let c = 0; c < CHUNK; c++) place[(start + c) * CHUNK + c] = 1;
        main = mergeFn(main, recent, np.array(place).reshape([Tc, CHUNK])) as Caches;
        recent = emptyChunk();
        for (let b = 0; b < B; b++) {
          for (let c = 0; c < CHUNK; c++) {
            mask[b * width + start + c] = 1;
            mask[b * width + Tc + c] = 0;
          }
        }
      }
      for (let b = 0; b < B; b++) {
        mask[b * width + Tc + j] = 1;
        positions[b] = P + step - padLeft[b]!;
      }
      slot.fill(0);
      slot[j] = 1;
      const stepRope = ropeTables(positions, 2 * half, config.ropeTheta);
      const out = decodeFn(
        tree.ref(params),
        tree.ref(main),
        recent,
        np.array(token),
        np.array(mask).reshape([B, width]),
        np.array(stepRope.cos).reshape([B, 1, 1, half]),
        np.array(stepRope.sin).reshape([B, 1, 1, half]),
        np.array(slot),
      ) as { logits: JaxArray; recent: Caches };
      logits = out.logits;
      recent = out.recent;
    }
  } finally {
    tree.dispose(main);
    tree.dispose(recent);
    logits?.dispose();
  }
  rows.length = realRows;
  if (options.decode) for (const row of rows) row.text = options.decode(row.tokens);
  return rows;
}

/** Per layer, the row groups' caches joined along the batch axis. */
function main0(parts: { caches: Caches }[], which: 'k' | 'v', layers: number): JaxArray[] {
  return Array.from({ length: layers }, (_, i) => np.concatenate(parts.map((p) => p.caches[which][i]!), 0));
}

/** Resolves after pending I/O has been handled (setImmediate runs after the poll phase). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function hitsStopString(tokens: readonly number[], options: GenerateOptions): boolean {
  if (!options.stopStrings || options.stopStrings.length === 0) return false;
  // Only the tail can newly contain a stop string; decode a window long enough for the longest.
  const longest = Math.max(...options.stopStrings.map((s) => s.length));
  const tail = options.decode!(tokens.slice(-4 * longest - 4));
  return options.stopStrings.some((s) => tail.includes(s));
}
