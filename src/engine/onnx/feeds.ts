/**
 * Host-side inputs of the model graph (model-graph.ts): token rows, per-row RoPE tables,
 * additive attention biases and head rows, for right- or left-padded batches. Positions count
 * from each row's first real token (so a left-padded row scores as if unpadded), and the bias
 * masks padding keys and the future with a finite −1e9 (MASKED).
 */
import { at } from '../../core/indexing.ts';
import { ropeTables } from '../../model/rope.ts';
import type { Feed } from './session.ts';

/** Masked attention logit (transformer.ts uses the same finite value). */
export const MASKED = -1e9;

export type Padding = 'right' | 'left';

export interface PackedRows {
  rows: number;
  length: number;
  /** Left padding of each row (0 when right-padded). */
  offsets: number[];
  lengths: number[];
  tokens: Int32Array; // [B, T]
  positions: Int32Array; // [B, T]
}

export function packRows(
  sequences: readonly ArrayLike<number>[],
  padding: Padding,
  length = Math.max(...sequences.map((s) => s.length)),
): PackedRows {
  const rows = sequences.length;
  const tokens = new Int32Array(rows * length);
  const positions = new Int32Array(rows * length);
  const offsets = sequences.map((s) => (padding === 'left' ? length - s.length : 0));
  sequences.forEach((sequence, b) => {
    const offset = at(offsets, b);
    for (let t = 0; t < sequence.length; t++) tokens[b * length + offset + t] = at(sequence, t);
    for (let t = 0; t < length; t++) positions[b * length + t] = Math.max(0, t - offset);
  });
  return { rows, length, offsets, lengths: sequences.map((s) => s.length), tokens, positions };
}

/** cos / sin feeds [B, T, hd/2] for per-row positions. */
export function ropeFeeds(
  positions: Int32Array,
  rows: number,
  length: number,
  headDimension: number,
  theta: number,
): { cos: Feed; sin: Feed } {
  const { cos, sin } = ropeTables(positions, headDimension, theta);
  const shape = [rows, length, headDimension / 2];
  return { cos: { dtype: 'float32', shape, data: cos }, sin: { dtype: 'float32', shape, data: sin } };
}

/**
 * Bias [B, 1, T, S + T] for a prompt pass over packed rows with `cacheSlots` cache slots in front
 * (all masked: a dummy slot, as there is no cache yet): query t sees keys j ≤ t of its own row.
 */
export function promptBias(packed: PackedRows, cacheSlots: number): Feed {
  const { rows, length: T, offsets, lengths } = packed;
  const width = cacheSlots + T;
  const data = new Float32Array(rows * T * width).fill(MASKED);
  for (let b = 0; b < rows; b++) {
    const first = at(offsets, b);
    const end = first + at(lengths, b);
    for (let t = 0; t < T; t++) {
      const row = (b * T + t) * width + cacheSlots;
      for (let j = first; j <= Math.min(t, end - 1); j++) data[row + j] = 0;
    }
  }
  return { dtype: 'float32', shape: [rows, 1, T, width], data };
}

/**
 * Head rows and targets for scoring: every position with a next token, in the flattened [B·T]
 * layout — or, with `masks` (one per packed row), only the positions whose mask is nonzero (the
 * tokens a loss reads). `slots[k]` = [row, token index the log-prob belongs to] (index 0 of a
 * sequence has none).
 */
export function scoringRows(
  packed: PackedRows,
  masks?: readonly ArrayLike<number>[],
): {
  headRows: Int32Array;
  targets: Int32Array;
  slots: [number, number][];
} {
  const slots: [number, number][] = [];
  const headRows: number[] = [];
  const targets: number[] = [];
  for (let b = 0; b < packed.rows; b++) {
    const offset = at(packed.offsets, b);
    const rowLength = at(packed.lengths, b);
    const mask = masks?.[b];
    for (let t = 1; t < rowLength; t++) {
      if (mask !== undefined && at(mask, t) === 0) continue;
      headRows.push(b * packed.length + offset + t - 1);
      targets.push(at(packed.tokens, b * packed.length + offset + t));
      slots.push([b, t]);
    }
  }
  return { headRows: Int32Array.from(headRows), targets: Int32Array.from(targets), slots };
}

/** Positions t ≥ 1 of `mask` that are nonzero: the head rows a masked sequence needs. */
export function maskedHeadCount(mask: ArrayLike<number>): number {
  let count = 0;
  for (let t = 1; t < mask.length; t++) if (at(mask, t) !== 0) count++;
  return count;
}

/**
 * Splits sequence indices into scoring chunks: at most `tokenBudget` padded tokens (rows × the
 * chunk's longest) and `headRowsPerRun` head rows (Σ `heads`, default length − 1 per sequence)
 * per chunk; sorted by length so a chunk pads little. A sequence that alone passes the head budget
 * gets a chunk of its own (its runs split its head rows).
 */
export function scoringChunks(
  lengths: readonly number[],
  { tokenBudget, headRowsPerRun }: { tokenBudget: number; headRowsPerRun: number },
  heads: readonly number[] = lengths.map((length) => Math.max(0, length - 1)),
): number[][] {
  const order = lengths.map((_, i) => i).sort((a, b) => at(lengths, a) - at(lengths, b) || a - b);
  const chunks: number[][] = [];
  let current: number[] = [];
  let longest = 0;
  let used = 0;
  for (const index of order) {
    const length = at(lengths, index);
    const nextLongest = Math.max(longest, length);
    const nextHeads = used + at(heads, index);
    if (current.length > 0 && (nextLongest * (current.length + 1) > tokenBudget || nextHeads > headRowsPerRun)) {
      chunks.push(current);
      current = [];
      longest = 0;
      used = 0;
    }
    current.push(index);
    longest = Math.max(longest, length);
    used += at(heads, index);
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
