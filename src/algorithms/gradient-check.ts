/**
 * Test support: seeded random per-sequence inputs and a central finite-difference gradient check
 * (float64), used by the algorithm tests to verify every analytic gradient against its loss value.
 */
import assert from 'node:assert/strict';
import { at } from '../core/indexing.ts';
import type { Rng } from '../core/rng.ts';

export function randomSequences(_rng: Rng, lengths: readonly number[], sample: () => number): Float64Array[] {
  return lengths.map((length) => Float64Array.from({ length }, sample));
}

/** 0/1 masks with every sequence holding at least one 1 (position 0 is always 0: a prompt token). */
export function randomMask(rng: Rng, lengths: readonly number[], probability = 0.7): Float64Array[] {
  return lengths.map((length) => {
    const mask = Float64Array.from({ length }, (_, t) => (t > 0 && rng.next() < probability ? 1 : 0));
    if (!mask.some((m) => m > 0)) mask[length - 1] = 1;
    return mask;
  });
}

/**
 * Asserts analytic[i][t] ≈ (f(x + h·e_it) − f(x − h·e_it)) / 2h for every entry, within
 * `tolerance` relative (plus 1e-9 absolute for entries that are ~0).
 */
export function assertGradientMatches(
  label: string,
  f: (x: Float64Array[]) => number,
  x: readonly Float64Array[],
  analytic: readonly ArrayLike<number>[],
  { h = 1e-5, tolerance = 1e-6 }: { h?: number; tolerance?: number } = {},
): void {
  const point = x.map((sequence) => Float64Array.from(sequence));
  let checked = 0;
  for (const [i, sequence] of point.entries()) {
    const analyticRow = at(analytic, i, 'analytic');
    for (let t = 0; t < sequence.length; t++) {
      const saved = at(sequence, t);
      sequence[t] = saved + h;
      const plus = f(point);
      sequence[t] = saved - h;
      const minus = f(point);
      sequence[t] = saved;
      const numeric = (plus - minus) / (2 * h);
      const got = at(analyticRow, t, 'analytic row');
      const allowed = tolerance * Math.max(Math.abs(numeric), Math.abs(got)) + 1e-9;
      assert.ok(
        Math.abs(got - numeric) <= allowed,
        `${label}: d/dx[${i}][${t}] analytic ${got} vs finite difference ${numeric}`,
      );
      checked += 1;
    }
  }
  assert.ok(checked > 0, `${label}: nothing checked`);
}

export function assertClose(actual: number, expected: number, tolerance = 1e-9, label = ''): void {
  assert.ok(
    Math.abs(actual - expected) <= tolerance * Math.max(1, Math.abs(expected)),
    `${label} expected ${expected}, got ${actual}`,
  );
}

export function assertAllClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  tolerance = 1e-9,
  label = '',
): void {
  assert.equal(actual.length, expected.length, `${label} length`);
  for (let t = 0; t < expected.length; t++) assertClose(at(actual, t), at(expected, t), tolerance, `${label}[${t}]`);
}
