/**
 * Per-sequence arrays, the shape every algorithm here works on: one array per sequence, each as
 * long as that sequence, aligned as documented in src/core/loss.ts. Inputs may be Float32Array,
 * Float64Array or number[]; results are Float64Array (float64 internally), and the `TokenLoss`
 * wrappers convert them to Float32Array at the boundary.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';

/** One array per sequence. */
export type Sequences = readonly ArrayLike<number>[];

/** Throws unless `arrays` has one array per sequence of `reference`, each of the same length. */
export function assertSameShape(
  name: string,
  arrays: Sequences,
  reference: Sequences,
  referenceName = 'lossMask',
): void {
  if (arrays.length !== reference.length) {
    throw new InvalidArgumentError(
      `${name} has ${arrays.length} sequences but ${referenceName} has ${reference.length}; they must match`,
      { name, sequences: arrays.length, expected: reference.length },
    );
  }
  for (const [i, array] of arrays.entries()) {
    const got = array.length;
    const expected = at(reference, i, referenceName).length;
    if (got !== expected) {
      throw new InvalidArgumentError(
        `${name}[${i}] has length ${got} but ${referenceName}[${i}] has length ${expected}; they must match`,
        { name, sequence: i, length: got, expected },
      );
    }
  }
}

export function zerosLike(reference: Sequences): Float64Array[] {
  return reference.map((sequence) => new Float64Array(sequence.length));
}

export function toFloat32(arrays: readonly ArrayLike<number>[]): Float32Array[] {
  return arrays.map((sequence) => Float32Array.from(sequence));
}

/** Σ mask·x / Σ mask over every sequence; 0 when no token is masked in. */
export function maskedMean(values: Sequences, mask: Sequences): number {
  let sum = 0;
  let count = 0;
  for (const [i, x] of values.entries()) {
    const m = at(mask, i, 'mask');
    for (let t = 0; t < x.length; t++) {
      const weight = at(m, t, 'mask row');
      sum += weight * at(x, t);
      count += weight;
    }
  }
  return count > 0 ? sum / count : 0;
}

/** w[i][t] · x[i][t] for every token: the aggregation weights `w` applied to a per-token derivative `x`. */
export function weightTokens(weights: readonly Float64Array[], values: Sequences): Float64Array[] {
  return weights.map((w, i) => {
    const x = at(values, i, 'derivatives');
    return w.map((weight, t) => weight * at(x, t, 'derivative row'));
  });
}

/** Throws unless `value` is a finite number inside [min, max]. */
export function assertInRange(name: string, value: number, min: number, max: number): void {
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${name} must be a number in [${min}, ${max}], got ${value}`, {
      name,
      value,
      min,
      max,
    });
  }
}
