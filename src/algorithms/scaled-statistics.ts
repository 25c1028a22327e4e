/**
 * Sums, means and standard deviations that cannot overflow, whatever the magnitude of the numbers:
 * every value is divided by a power of two 2^k ≥ max |x| first (k ≤ 1023), so the arithmetic runs
 * on x / 2^k ∈ [−2, 2] and the scale is applied once at the end.
 *
 * Dividing by a power of two is exact in binary floating point, and every rounding commutes with
 * it, so for numbers whose plain sums and squares fit a double the results are bit for bit those
 * of the plain formulas (values below 2^−1022 of the largest aside, which become subnormal). Only
 * where the plain formula would reach ±Infinity (and then NaN: ∞ − ∞, 0 · ∞) does the result
 * differ: finite inputs always give finite results here. A result whose true value is not a double
 * at all (a sum beyond ±1.8e308) saturates at ±Number.MAX_VALUE. Non-finite inputs propagate.
 */

/** The largest |x| of `values`, or NaN when one of them is not finite. */
function largestMagnitude(values: ArrayLike<number>): number {
  let largest = 0;
  for (let i = 0; i < values.length; i++) {
    const magnitude = Math.abs(values[i] as number);
    if (!Number.isFinite(magnitude)) return Number.NaN;
    if (magnitude > largest) largest = magnitude;
  }
  return largest;
}

/**
 * 2^k with 2^(k−1) < max |x| ≤ 2^k (k at most 1023), or 1 when max |x| ≤ 1 or a value is not
 * finite (then the plain arithmetic runs and the non-finite value propagates as it would).
 */
export function powerOfTwoScale(values: ArrayLike<number>): number {
  const largest = largestMagnitude(values);
  if (!(largest > 1)) return 1;
  return 2 ** Math.min(1023, Math.ceil(Math.log2(largest)));
}

/** `x` with an overflow to ±Infinity clamped to ±Number.MAX_VALUE (NaN stays NaN). */
export function saturate(x: number): number {
  if (x === Number.POSITIVE_INFINITY) return Number.MAX_VALUE;
  if (x === Number.NEGATIVE_INFINITY) return -Number.MAX_VALUE;
  return x;
}

/** Σ x without an intermediate overflow; a true sum beyond the doubles saturates. */
export function scaledSum(values: ArrayLike<number>): number {
  const scale = powerOfTwoScale(values);
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += (values[i] as number) / scale;
  return saturate(sum * scale);
}

export interface ScaledMoments {
  /** The power of two the values were divided by (powerOfTwoScale). */
  scale: number;
  /** mean(x) / scale. */
  mean: number;
  /** variance(x) / scale²: unbiased (÷ (n − 1)) or population (÷ n); 0 for fewer than two values when unbiased. */
  variance: number;
  /** std(x) / scale = sqrt(variance). */
  std: number;
}

/**
 * Mean, variance and standard deviation of `values` divided by `scale` (so none can overflow):
 * mean = Σ x / n, variance = Σ (x − mean)² / (n − 1), or / n with `unbiased` false.
 */
export function scaledMoments(values: readonly number[], { unbiased = true } = {}): ScaledMoments {
  const scale = powerOfTwoScale(values);
  const n = values.length;
  const mean = values.reduce((sum, x) => sum + x / scale, 0) / n;
  if (unbiased && n < 2) return { scale, mean, variance: 0, std: 0 };
  const squares = values.reduce((sum, x) => sum + (x / scale - mean) ** 2, 0);
  const variance = squares / (unbiased ? n - 1 : n);
  return { scale, mean, variance, std: Math.sqrt(variance) };
}
