/**
 * Entropy bonus (Williams & Peng 1991; PPO's c₂·S term), as verl `entropy_coeff` (default 0):
 *   L = −coef · agg(H)       dL/dH[i][t] = −coef · w[i][t]
 * with H the per-token entropies of the current policy and w the aggregation weights
 * (../aggregation.ts). `entropy` = agg(H), the value logged.
 */
import { aggregate, type LossAggMode } from '../aggregation.ts';
import { assertSameShape, type Sequences } from '../sequences.ts';

export function entropyBonus({
  entropies,
  lossMask,
  coef = 0,
  lossAggMode = 'token-mean',
  lossScaleFactor = null,
}: {
  entropies: Sequences;
  lossMask: Sequences;
  /** verl `entropy_coeff`, default 0. */
  coef?: number;
  lossAggMode?: LossAggMode;
  lossScaleFactor?: number | null;
}): { loss: number; gradEntropies: Float64Array[]; metrics: { entropy: number } } {
  assertSameShape('entropies', entropies, lossMask);
  const { value, weights } = aggregate(entropies, lossMask, { mode: lossAggMode, lossScaleFactor });
  return {
    loss: -coef * value,
    gradEntropies: weights.map((w) => w.map((wt) => -coef * wt)),
    metrics: { entropy: value },
  };
}
