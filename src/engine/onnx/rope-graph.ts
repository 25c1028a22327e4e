/**
 * Rotary position embedding (RoPE, Su et al. 2021), half-split as HF's `rotate_half`, on
 * x [B, heads, T, hd] with host tables cos, sin [B, 1, T, hd/2] (model/rope.ts, per row):
 *
 *   RoPE(x) = [x₁·cos − x₂·sin, x₂·cos + x₁·sin] = x·C + (x P)·S
 *   C = [cos, cos], S = [−sin, sin], P the permutation matrix that swaps the halves
 *
 * Four nodes forward and four backward (the transposed P), where slices, a concat and their pads
 * took twice that. x P is exact (one 1 a column, zeros elsewhere), so the values are the slice
 * form's to the bit.
 */
import type { ValueId } from './graph.ts';
import type { GraphBuilder } from './ops.ts';

export interface RopeTables {
  /** [B, 1, T, hd]: [cos, cos]. */
  cos: ValueId;
  /** [B, 1, T, hd]: [−sin, sin]. */
  sin: ValueId;
  /** [hd, hd]: (x P)_j = x_{(j + hd/2) mod hd}. */
  swapHalves: ValueId;
}

/** The full-width tables from the half-width ones (built once a graph, shared by every layer). */
export function ropeTables(g: GraphBuilder, cos: ValueId, sin: ValueId, hd: number): RopeTables {
  const half = hd / 2;
  const swap = new Float32Array(hd * hd);
  for (let j = 0; j < hd; j++) swap[((j + half) % hd) * hd + j] = 1;
  return {
    cos: g.concat([cos, cos], -1),
    sin: g.concat([g.neg(sin), sin], -1),
    swapHalves: g.floats(swap, [hd, hd]),
  };
}

/** RoPE(x) for x [B, heads, T, hd]. */
export function rotate(g: GraphBuilder, x: ValueId, tables: RopeTables): ValueId {
  return g.add(g.mul(x, tables.cos), g.mul(g.matMul(x, tables.swapHalves), tables.sin));
}
