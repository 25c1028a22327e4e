/**
 * Powers of two for fixed compiled shapes: jax-js compiles once per shape and its wasm allocator
 * reuses a buffer only for the same size, so batch rows and padded lengths are rounded to powers
 * of two (generate.ts, micro-batches.ts).
 */

/** The smallest power of two ≥ n, at least `least` (itself a power of two). */
export function powerOfTwoAtLeast(n: number, least = 1): number {
  let power = least;
  while (power < n) power *= 2;
  return power;
}

/** The largest power of two ≤ n (n ≥ 1). */
export function powerOfTwoAtMost(n: number): number {
  let power = 1;
  while (power * 2 <= n) power *= 2;
  return power;
}
