/**
 * The sampler's KV cache and the decoder block's cached attention (one token per row).
 *
 * Shapes stay fixed so one compiled decode step serves the whole generation, and the big cache is
 * not rewritten per token (jax-js has no in-place update; a one-hot write of a [B, KV, T, hd]
 * cache cost ~0.35–0.74 ms per layer and dominated decoding). Instead:
 *   main cache   [B, KV, Tc, hd]  the prompt and all finished chunks, read-only within a chunk;
 *   recent chunk [B, KV, C, hd]   the last ≤ C tokens, written per token with a one-hot slot mask;
 * attention runs over both (one softmax over the concatenated scores), and every C tokens the chunk
 * is merged into the main cache with a placement matmul, main + E·chunk (E [Tc, C] one-hot).
 */
import { at } from '../core/indexing.ts';
import { numpy as np, nn, type JaxArray } from './jax.ts';
import { headDim, type ModelConfig } from './config.ts';
import type { Attention } from './transformer.ts';

/** Tokens per recent chunk; prompts are padded to multiples of it (see batch.ts LENGTH_BUCKET). */
export const CHUNK = 16;

/** Where each row's tokens sit in the cache: rows left-padded to a shared prompt length P. */
export interface CacheLayout {
  /** Rows B. */
  rows: number;
  /** Padded prompt length P. */
  promptLen: number;
  /** Main cache slots Tc: prompt + every chunk but the last. */
  mainSlots: number;
  /** Attendable-slot mask width: Tc + C. */
  width: number;
  /** Left padding of each row. */
  padLeft: number[];
}

export interface Caches {
  k: JaxArray[]; // per layer [B, KV, Tc, hd] (main) or [B, KV, C, hd] (recent chunk)
  v: JaxArray[];
}

/** Where this step's token goes in the recent chunk, and which slots it may attend to. */
export interface CacheWrite {
  /** One-hot slot [1, 1, C, 1]. */
  write: JaxArray;
  /** 1 − write, [1, 1, C, 1]. */
  keep: JaxArray;
  /** Additive bias [B, 1, 1, Tc + C]: 0 on attendable slots (main, then recent), −1e9 elsewhere. */
  bias: JaxArray;
}

/** The write masks from mask [B, Tc + C] (1 = attendable) and slot [C] one-hot. Consumes both. */
export function cacheWrite(mask: JaxArray, slot: JaxArray): CacheWrite {
  const [B, width] = mask.shape as [number, number];
  const C = at(slot.shape, 0, 'slot.shape');
  const bias = mask.reshape([B, 1, 1, width]).sub(1).mul(1e9); // [B, 1, 1, Tc + C]
  const write = slot.reshape([1, 1, C, 1]); // [1, 1, C, 1]
  const keep = np.subtract(1, write.ref); // [1, 1, C, 1]
  return { write, keep, bias };
}

/**
 * Attention of one query per row over the main cache and the recent chunk of `layer`, after
 * writing this token's key and value into the chunk (pushed onto `next`, the updated chunk).
 * Grouped query heads share their KV head without copying the cache: q as [B, KV, G, hd].
 * Consumes the layer's cache arrays; reads `step` through new references.
 */
export function cachedAttention(
  config: ModelConfig,
  main: Caches,
  recent: Caches,
  layer: number,
  step: CacheWrite,
  next: Caches,
): Attention {
  return (q, k, v) => {
    const B = at(q.shape, 0, 'q.shape');
    const hd = headDim(config);
    const KV = config.numKvHeads;
    const mainK = at(main.k, layer, 'main.k');
    const mainV = at(main.v, layer, 'main.v');
    const Tc = at(mainK.shape, 2, 'main.k.shape');
    const C = at(step.write.shape, 2, 'write.shape');
    const recentK = at(recent.k, layer, 'recent.k').mul(step.keep.ref).add(k.mul(step.write.ref)); // [B, KV, C, hd]
    const recentV = at(recent.v, layer, 'recent.v').mul(step.keep.ref).add(v.mul(step.write.ref)); // [B, KV, C, hd]
    next.k.push(recentK.ref);
    next.v.push(recentV.ref);
    const qg = q.reshape([B, KV, config.numHeads / KV, hd]); // [B, KV, G, hd]
    const scores = np
      .concatenate(
        [np.matmul(qg.ref, mainK.transpose([0, 1, 3, 2])), np.matmul(qg, recentK.transpose([0, 1, 3, 2]))],
        -1,
      ) // [B, KV, G, Tc + C]
      .mul(1 / Math.sqrt(hd))
      .add(step.bias.ref);
    const weights = nn.softmax(scores, -1); // [B, KV, G, Tc + C]
    return np
      .matmul(weights.ref.slice([], [], [], [0, Tc]), mainV)
      .add(np.matmul(weights.slice([], [], [], [Tc, Tc + C]), recentV)) // [B, KV, G, hd]
      .reshape([B, config.numHeads * hd]); // [B, H·hd]
  };
}

/** main + E·recent per layer, E [Tc, C] placing the chunk at its slots (which are zero in main). */
export function mergeChunk(main: Caches, recent: Caches, place: JaxArray): Caches {
  const merged: Caches = { k: [], v: [] };
  const [Tc, C] = place.shape as [number, number];
  place = place.reshape([1, 1, Tc, C]);
  for (let i = 0; i < main.k.length; i++) {
    merged.k.push(at(main.k, i, 'main.k').add(np.matmul(place.ref, at(recent.k, i, 'recent.k'))));
    merged.v.push(at(main.v, i, 'main.v').add(np.matmul(place.ref, at(recent.v, i, 'recent.v'))));
  }
  place.dispose();
  return merged;
}

/** A recent chunk of zeros, [B, KV, C, hd] per layer. */
export function emptyChunk(config: ModelConfig, rows: number, chunk: number): Caches {
  const zeros = () =>
    Array.from({ length: config.numLayers }, () => np.zeros([rows, config.numKvHeads, chunk, headDim(config)]));
  return { k: zeros(), v: zeros() };
}

/** E [Tc, C] one-hot: recent slot c goes to main slot start + c. */
export function chunkPlacement(mainSlots: number, chunk: number, start: number): JaxArray {
  const place = new Float32Array(mainSlots * chunk);
  for (let c = 0; c < chunk; c++) place[(start + c) * chunk + c] = 1;
  return np.array(place).reshape([mainSlots, chunk]);
}

/** Per layer, the row groups' caches joined along the batch axis. */
export function concatenateRows(parts: readonly Caches[]): Caches {
  const first = at(parts, 0, 'parts');
  const join = (which: 'k' | 'v') =>
    first[which].map((_, i) =>
      np.concatenate(
        parts.map((p) => at(p[which], i, which)),
        0,
      ),
    );
  return { k: join('k'), v: join('v') };
}
