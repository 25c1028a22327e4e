/**
 * Rotary position tables on the host (RoFormer, Su et al. 2021): for position p and pair i,
 * angle = p · θ^(−2i/hd). Built per batch so each row can start counting at its own first token.
 */
import { at } from '../core/indexing.ts';

export function ropeTables(
  positions: Int32Array,
  headDimension: number,
  theta: number,
): { cos: Float32Array; sin: Float32Array } {
  const half = headDimension / 2;
  const cos = new Float32Array(positions.length * half);
  const sin = new Float32Array(positions.length * half);
  for (let n = 0; n < positions.length; n++) {
    const p = at(positions, n, 'positions');
    for (let i = 0; i < half; i++) {
      const angle = p * theta ** ((-2 * i) / headDimension);
      cos[n * half + i] = Math.cos(angle);
      sin[n * half + i] = Math.sin(angle);
    }
  }
  return { cos, sin };
}
