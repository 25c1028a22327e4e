/**
 * How the built-in model cuts a batch of sequences into compiled calls: token budgets per call
 * (lowered at real vocabularies so [tokens, V] logits fit), power-of-two padded lengths, and
 * micro-batches of fixed shapes.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { packRightPadded, type PackedBatch } from './batch.ts';
import { powerOfTwoAtLeast } from './power-of-two.ts';

/** Padded tokens per compiled training call (bounds memory: attention is [B, H, T, T]). */
export const TRAIN_TOKEN_BUDGET = 2048;
/** Padded tokens per compiled scoring call. */
export const SCORE_TOKEN_BUDGET = 4096;
/** Shortest padded length of a training or scoring micro-batch. */
export const MIN_TRAIN_LENGTH = 32;
/**
 * Most logits ([tokens, V] elements) per compiled call: 2^25 float32 = 128 MB per [N, V] tensor,
 * of which the heads and their backward hold a few. It binds only at real vocabularies (at
 * SmolLM2's 49,152 ids: 682 tokens per call); the byte models' calls keep their budgets.
 */
export const HEAD_ELEMENT_BUDGET = 2 ** 25;
/**
 * The same for a training call, whose backward keeps every layer's activations as well: 2^24
 * (at 49,152 ids, 341 tokens: one row of 256). Set when 2 × 256 tokens of a SmolLM2-135M LoRA
 * backward after scoring passed the 4 GiB heap (bench/real-memory.ts) — in one compiled call,
 * before the layer-by-layer backward (layerwise-backward.ts), which holds far less; not re-measured.
 */
export const TRAIN_HEAD_ELEMENT_BUDGET = 2 ** 24;

/** Padded tokens per compiled call: the given budget, lowered so [tokens, V] logits fit `headElements`. */
export function tokensPerCall(budget: number, vocabSize: number, headElements: number = HEAD_ELEMENT_BUDGET): number {
  return Math.max(MIN_TRAIN_LENGTH, Math.min(budget, Math.floor(headElements / vocabSize)));
}

/** The power of two ≥ length (and ≥ MIN_TRAIN_LENGTH), capped at the window. */
export function powerOfTwoBucket(length: number, maxSeqLen: number): number {
  return Math.min(powerOfTwoAtLeast(length, MIN_TRAIN_LENGTH), maxSeqLen);
}

export interface MicroBatch {
  /** Positions of its sequences in the caller's batch. */
  indices: number[];
  packed: PackedBatch;
}

/**
 * Splits a batch into micro-batches of fixed shapes: the padded length is a power of two (at
 * least MIN_TRAIN_LENGTH, at most the window) and the rows fill the token budget (filler rows
 * are one masked token). Fixed shapes matter twice in jax-js 0.1.25: each new shape compiles
 * anew, and its wasm allocator reuses a freed buffer only for an identical size class, so shape
 * variety grows memory until the 4 GiB wasm32 limit. Sequences are grouped by length bucket,
 * in order within a bucket.
 */
export function microBatches(
  sequences: readonly ArrayLike<number>[],
  {
    tokenBudget,
    headElements,
    vocabSize,
    maxSeqLen,
  }: { tokenBudget: number; headElements: number; vocabSize: number; maxSeqLen: number },
): MicroBatch[] {
  const budget = tokensPerCall(tokenBudget, vocabSize, headElements);
  const byLength = new Map<number, number[]>();
  sequences.forEach((sequence, index) => {
    const length = powerOfTwoBucket(sequence.length, maxSeqLen);
    if (sequence.length > maxSeqLen) {
      throw new InvalidArgumentError(
        `a sequence of ${sequence.length} tokens exceeds the model's context window of ${maxSeqLen}`,
      );
    }
    const group = byLength.get(length) ?? [];
    if (group.length === 0) byLength.set(length, group);
    group.push(index);
  });
  const micro: MicroBatch[] = [];
  for (const [length, indices] of [...byLength].sort(([a], [b]) => a - b)) {
    // Full micro-batches fill the budget; a smaller group uses the next power of two of rows.
    const rows = Math.min(Math.max(1, Math.floor(budget / length)), powerOfTwoAtLeast(indices.length));
    for (let start = 0; start < indices.length; start += rows) {
      const chunk = indices.slice(start, start + rows);
      micro.push({
        indices: chunk,
        packed: packRightPadded(
          chunk.map((i) => at(sequences, i, 'sequences')),
          maxSeqLen,
          rows,
          length,
        ),
      });
    }
  }
  return micro;
}
