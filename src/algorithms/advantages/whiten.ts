/**
 * Masked whitening over the whole batch (verl `masked_whiten`):
 *   x̂ = (x − μ) / sqrt(σ² + 1e-8)   with μ, σ² the mean and unbiased variance of the masked tokens.
 * Tokens outside the mask come out 0. With fewer than two masked tokens σ² is taken as 0.
 */
import { at } from '../../core/indexing.ts';
import { assertSameShape, maskedMean, type Sequences } from '../sequences.ts';

export function whiten(values: Sequences, lossMask: Sequences): Float64Array[] {
  assertSameShape('values', values, lossMask);
  const mean = maskedMean(values, lossMask);
  let squares = 0;
  let count = 0;
  for (const [i, x] of values.entries()) {
    const m = at(lossMask, i);
    for (let t = 0; t < x.length; t++) {
      const weight = at(m, t);
      squares += weight * (at(x, t) - mean) ** 2;
      count += weight;
    }
  }
  const variance = count > 1 ? squares / (count - 1) : 0;
  const scale = 1 / Math.sqrt(variance + 1e-8);
  return values.map((x, i) => {
    const m = at(lossMask, i);
    const out = new Float64Array(x.length);
    for (let t = 0; t < x.length; t++) out[t] = at(m, t) > 0 ? (at(x, t) - mean) * scale : 0;
    return out;
  });
}
