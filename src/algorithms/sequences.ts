/**
 * Per-sequence arrays, the shape every algorithm here works on: one array per sequence, each as
 * long as that sequence, aligned as documented in src/core/loss.ts. Inputs may be Float32Array,
 * Float64Array or number[]; results are Float64Array (float64 internally), and the `TokenLoss`
 * wrappers convert them to Float32Array at the boundary.
 */
import { InvalidArgumentError } from '../core/errors.ts';

/** One array per sequence. */
export type Sequences = readonly ArrayLike<number>[];

/** Throws unless `arrays` has one array per sequence of `reference`, each of the same length. */
export function assertSameShape(name: string, arrays: Sequences, reference: Sequences, referenceName = 'lossMask'): void {
  if (arrays.length !== reference.length) {
    throw new InvalidArgumentError(
      `${name} has ${arrays.length} sequences but ${referenceName} has ${reference.length}; they must match`,
      { name, sequences: arrays.length, expected: reference.length },
    );
  }
  for (let i = 0; i < arrays.length; i++) {
    const got = arrays[i]!.length;
    const expected = reference[i]!.length;
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
  for (let i = 0; i < values.length; i++) {
    const x = values[i]!;
    const m = mask[i]!;
    for (let t = 0; t < x.length; t++) {
      sum += m[t]! * x[t]!;
      count += m[t]!;
    }
  }
  return count > 0 ? sum / count : 0;
}

/** Throws unless `value` is a finite number inside [min, max]. */
export function assertInRange(name: string, value: number, min: number, max: number): void {
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${name} must be a number in [${min}, ${max}], got ${value}`, { name, value, min, max });
  }
}
