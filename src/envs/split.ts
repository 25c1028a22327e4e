/**
 * Disjoint seed ranges for the train / validation / test splits. A task generator is a pure
 * function of its seed, so disjoint seed ranges give disjoint task streams:
 *
 *   train      [0,             1_000_000_000)
 *   validation [1_000_000_000, 2_000_000_000)
 *   test       [2_000_000_000, 3_000_000_000)
 *
 * All seeds stay below 2^32, the range `Rng` seeds from.
 */
import { InvalidArgumentError, type Split } from '../core/index.ts';

export const splits: readonly Split[] = ['train', 'validation', 'test'];

/** How many seeds each split holds. */
export const SPLIT_SIZE = 1_000_000_000;

const splitBase: Record<Split, number> = { train: 0, validation: SPLIT_SIZE, test: 2 * SPLIT_SIZE };

/** The seed of the `index`-th task of a split. */
export function splitSeed(split: Split, index: number): number {
  if (!splits.includes(split)) {
    throw new InvalidArgumentError(`unknown split "${String(split)}"; allowed: ${splits.join(', ')}`, { split });
  }
  if (!Number.isInteger(index) || index < 0 || index >= SPLIT_SIZE) {
    throw new InvalidArgumentError(`split index must be an integer in [0, ${SPLIT_SIZE}), got ${index}`, { index });
  }
  return splitBase[split] + index;
}

/** `count` consecutive seeds of a split, starting at index `start`. */
export function splitSeeds(split: Split, count: number, start = 0): number[] {
  return Array.from({ length: count }, (_, i) => splitSeed(split, start + i));
}

/** Which split a seed belongs to. */
export function splitOfSeed(seed: number): Split {
  if (!Number.isInteger(seed) || seed < 0 || seed >= 3 * SPLIT_SIZE) {
    throw new InvalidArgumentError(`seed ${seed} is outside every split; allowed: integers in [0, ${3 * SPLIT_SIZE})`, {
      seed,
    });
  }
  return splits[Math.floor(seed / SPLIT_SIZE)] as Split;
}
