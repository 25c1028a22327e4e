/**
 * Masked whitening over the whole batch (verl `masked_whiten`):
 *   x̂ = (x − μ) / sqrt(σ² + 1e-8)   with μ, σ² the mean and unbiased variance of the masked tokens.
 * Tokens outside the mask come out 0. With fewer than two masked tokens σ² is taken as 0.
 *
 * μ and σ² are computed on x / 2^k, a power of two at or above max |x| (../scaled-statistics.ts):
 * exact, so ordinary values whiten bit for bit as the plain formula, and no sum or square can
 * overflow, so finite values of any spread (returns of ±1e308) whiten to finite values.
 */
import { at } from '../../core/indexing.ts';
import { powerOfTwoScale } from '../scaled-statistics.ts';
import { assertSameShape, type Sequences } from '../sequences.ts';

export function whiten(values: Sequences, lossMask: Sequences): Float64Array[] {
  assertSameShape('values', values, lossMask);
  const scale = values.reduce((largest, x) => Math.max(largest, powerOfTwoScale(x)), 1);
  let sum = 0;
  let count = 0;
  for (const [i, x] of values.entries()) {
    const m = at(lossMask, i);
    for (let t = 0; t < x.length; t++) {
      const weight = at(m, t);
      sum += weight * (at(x, t) / scale);
      count += weight;
    }
  }
  const mean = count > 0 ? sum / count : 0; // μ / scale
  let squares = 0;
  for (const [i, x] of values.entries()) {
    const m = at(lossMask, i);
    for (let t = 0; t < x.length; t++) squares += at(m, t) * (at(x, t) / scale - mean) ** 2;
  }
  const variance = count > 1 ? squares / (count - 1) : 0; // σ² / scale²
  const spread = Math.sqrt(variance + 1e-8 / scale / scale); // sqrt(σ² + 1e-8) / scale
  const inverse = spread > 0 ? 1 / spread : 0; // 0 only when 1e-8 / scale² underflows and nothing varies
  return values.map((x, i) => {
    const m = at(lossMask, i);
    const out = new Float64Array(x.length);
    for (let t = 0; t < x.length; t++) out[t] = at(m, t) > 0 ? (at(x, t) / scale - mean) * inverse : 0;
    return out;
  });
}
