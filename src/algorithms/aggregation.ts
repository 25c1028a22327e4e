/**
 * Loss aggregation: turns per-token losses ℓ[i][t] into one scalar. Every mode is linear in ℓ,
 *   L = Σ_i Σ_t w[i][t] · ℓ[i][t],
 * so `aggregate` returns the weights w too: dL/dx = Σ w · dℓ/dx, and gradients compose.
 * With m = loss mask, n_i = Σ_t m[i][t], N = Σ_i n_i and S = number of sequences with n_i > 0:
 *   token-mean               w = m / N                  (verl default; TRL "bnpo"/"dapo")
 *   seq-mean-token-mean      w = m / (n_i · S)          (GRPO paper; TRL "grpo")
 *   seq-mean-token-sum       w = m / S
 *   seq-mean-token-sum-norm  w = m / C                  (Dr. GRPO, arXiv:2503.20783; TRL "dr_grpo")
 * C is a constant (`lossScaleFactor`): verl's default is the padded response length (the
 * configured max response length), TRL's dr_grpo divides by batch × max completion length — never
 * a length measured on the batch, which would change the weight of a token with its minibatch.
 * seq-mean-token-sum-norm therefore requires it. Matches verl `agg_loss(loss_agg_mode=…)`, except
 * that sequences with no policy token are left out of the seq-mean count S instead of producing NaN.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { Sequences } from './sequences.ts';

export const lossAggModes = [
  'token-mean',
  'seq-mean-token-mean',
  'seq-mean-token-sum',
  'seq-mean-token-sum-norm',
] as const;
export type LossAggMode = (typeof lossAggModes)[number];

export interface AggregationOptions {
  mode: LossAggMode;
  /** The constant divisor C of seq-mean-token-sum-norm (required for that mode; ignored by the others). */
  lossScaleFactor?: number | null;
}

/** The weights w[i][t] of the aggregation (they depend on the mask only). */
export function aggregationWeights(
  lossMask: Sequences,
  { mode, lossScaleFactor = null }: AggregationOptions,
): Float64Array[] {
  if (!lossAggModes.includes(mode)) {
    throw new InvalidArgumentError(`unknown loss aggregation mode "${mode}"; allowed: ${lossAggModes.join(', ')}`, {
      mode,
      allowed: lossAggModes,
    });
  }
  const counts = lossMask.map((mask) => {
    let n = 0;
    for (let t = 0; t < mask.length; t++) n += at(mask, t);
    return n;
  });
  const total = counts.reduce((a, b) => a + b, 0);
  const sequencesWithTokens = counts.filter((n) => n > 0).length;
  if (lossScaleFactor !== null && !(lossScaleFactor > 0)) {
    throw new InvalidArgumentError(`lossScaleFactor must be a positive number or null, got ${lossScaleFactor}`, {
      lossScaleFactor,
    });
  }
  if (mode === 'seq-mean-token-sum-norm' && lossScaleFactor === null) {
    throw new InvalidArgumentError(
      'seq-mean-token-sum-norm divides by a constant: set lossScaleFactor (e.g. the max response length, as verl; Dr. GRPO uses the generation budget)',
      { mode },
    );
  }
  const scale = lossScaleFactor ?? 1;
  return lossMask.map((mask, i) => {
    const n = at(counts, i);
    let perToken = 0;
    if (n > 0) {
      if (mode === 'token-mean') perToken = 1 / total;
      else if (mode === 'seq-mean-token-mean') perToken = 1 / (n * sequencesWithTokens);
      else if (mode === 'seq-mean-token-sum') perToken = 1 / sequencesWithTokens;
      else perToken = 1 / scale;
    }
    const weights = new Float64Array(mask.length);
    for (let t = 0; t < mask.length; t++) weights[t] = at(mask, t) * perToken;
    return weights;
  });
}

/** L = Σ w·ℓ, with the weights w = dL/dℓ. */
export function aggregate(
  tokenLosses: Sequences,
  lossMask: Sequences,
  options: AggregationOptions,
): { value: number; weights: Float64Array[] } {
  const weights = aggregationWeights(lossMask, options);
  let value = 0;
  for (const [i, w] of weights.entries()) {
    const loss = at(tokenLosses, i, 'tokenLosses');
    for (let t = 0; t < w.length; t++) {
      const weight = at(w, t);
      if (weight !== 0) value += weight * at(loss, t);
    }
  }
  return { value, weights };
}
