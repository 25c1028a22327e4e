/**
 * Packs token sequences into fixed-shape host arrays for the compiled functions. Shapes are
 * rounded up to buckets so that a handful of compiled variants serve every batch (jax-js compiles
 * once per input shape).
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';

/** Sequence lengths are padded up to a multiple of this (and capped at the context window). */
export const LENGTH_BUCKET = 16;

export function bucketLength(length: number, maxSeqLen: number, bucket: number = LENGTH_BUCKET): number {
  return Math.min(maxSeqLen, Math.max(bucket, Math.ceil(length / bucket) * bucket));
}

/** A right-padded batch: row b holds sequence b from position 0. */
export interface PackedBatch {
  batch: number;
  seqLen: number;
  lengths: number[];
  /** [B·T] token ids (0 on padding). */
  tokens: Int32Array;
  /** [B·T] the next token at each position (0 where there is none). */
  targets: Int32Array;
  /** [B·T] 1 on real tokens. */
  keyMask: Float32Array;
}

export function packRightPadded(
  sequences: readonly ArrayLike<number>[],
  maxSeqLen: number,
  rows?: number,
  bucket: number = LENGTH_BUCKET,
): PackedBatch {
  if (sequences.length === 0) throw new InvalidArgumentError('cannot pack an empty batch of sequences');
  let longest = 0;
  for (const sequence of sequences) longest = Math.max(longest, sequence.length);
  if (longest > maxSeqLen) {
    throw new InvalidArgumentError(
      `a sequence of ${longest} tokens exceeds the model's context window of ${maxSeqLen}`,
      {
        length: longest,
        maxSeqLen,
      },
    );
  }
  const batch = Math.max(rows ?? sequences.length, sequences.length);
  const seqLen = bucketLength(longest, maxSeqLen, bucket);
  const tokens = new Int32Array(batch * seqLen);
  const targets = new Int32Array(batch * seqLen);
  const keyMask = new Float32Array(batch * seqLen);
  const lengths: number[] = [];
  sequences.forEach((sequence, b) => {
    const base = b * seqLen;
    for (let t = 0; t < sequence.length; t++) {
      const token = at(sequence, t, 'sequence');
      tokens[base + t] = token;
      keyMask[base + t] = 1;
      if (t > 0) targets[base + t - 1] = token;
    }
    lengths.push(sequence.length);
  });
  // Filler rows (to keep a fixed batch shape) hold one token so no row is fully masked.
  for (let b = sequences.length; b < batch; b++) {
    keyMask[b * seqLen] = 1;
    lengths.push(0);
  }
  return { batch, seqLen, lengths, tokens, targets, keyMask };
}

/**
 * Spreads per-sequence arrays aligned to tokens (index t = quantity for token t, see
 * core/loss.ts) into the packed "next-token" layout (index t−1), or back.
 */
export function toNextTokenLayout(
  packed: PackedBatch,
  perSequence: readonly ArrayLike<number>[],
  out?: Float32Array,
): Float32Array {
  const result = out ?? new Float32Array(packed.batch * packed.seqLen);
  result.fill(0);
  perSequence.forEach((values, b) => {
    const base = b * packed.seqLen;
    const length = Math.min(values.length, at(packed.lengths, b, 'packed.lengths'));
    for (let t = 1; t < length; t++) result[base + t - 1] = at(values, t, 'values');
  });
  return result;
}

export function fromNextTokenLayout(packed: PackedBatch, flat: Float32Array, count: number): Float32Array[] {
  const result: Float32Array[] = [];
  for (let b = 0; b < count; b++) {
    const length = at(packed.lengths, b, 'packed.lengths');
    const values = new Float32Array(length);
    const base = b * packed.seqLen;
    for (let t = 1; t < length; t++) values[t] = at(flat, base + t - 1, 'flat');
    result.push(values);
  }
  return result;
}
