/**
 * Rotary position tables on the host (RoFormer, Su et al. 2021): for position p and pair i,
 * angle = p · θ^(−2i/hd). Built per batch (rows of one cached table per head size and θ) so each row
 * can start counting at its own first token.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';

/** cos and sin of every position below `count` for one head size and θ, flattened [count, hd/2]. */
interface PositionTable {
  count: number;
  cos: Float32Array;
  sin: Float32Array;
}

/** Per head size and θ: the table the batches copy their rows from, grown (doubled) on demand. */
const positionTables = new Map<string, PositionTable>();

function positionTable(headDimension: number, theta: number, count: number): PositionTable {
  const key = `${headDimension}:${theta}`;
  const known = positionTables.get(key);
  if (known !== undefined && known.count >= count) return known;
  const size = Math.max(count, 2 * (known?.count ?? 64));
  const half = headDimension / 2;
  const table = { count: size, cos: new Float32Array(size * half), sin: new Float32Array(size * half) };
  for (let p = 0; p < size; p++) {
    for (let i = 0; i < half; i++) {
      const angle = p * theta ** ((-2 * i) / headDimension);
      table.cos[p * half + i] = Math.cos(angle);
      table.sin[p * half + i] = Math.sin(angle);
    }
  }
  positionTables.set(key, table);
  return table;
}

/** The tables [N, hd/2] of `positions` (non-negative integers): rows of the cached position table. */
export function ropeTables(
  positions: Int32Array,
  headDimension: number,
  theta: number,
): { cos: Float32Array; sin: Float32Array } {
  const half = headDimension / 2;
  let last = 0;
  for (const p of positions) {
    if (!(Number.isInteger(p) && p >= 0))
      throw new InvalidArgumentError(`rope: position ${p} is not a non-negative integer`, { position: p });
    last = Math.max(last, p);
  }
  const table = positionTable(headDimension, theta, last + 1);
  const cos = new Float32Array(positions.length * half);
  const sin = new Float32Array(positions.length * half);
  for (let n = 0; n < positions.length; n++) {
    const from = at(positions, n, 'positions') * half;
    cos.set(table.cos.subarray(from, from + half), n * half);
    sin.set(table.sin.subarray(from, from + half), n * half);
  }
  return { cos, sin };
}
