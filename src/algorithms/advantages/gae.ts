/**
 * Generalized Advantage Estimation (Schulman et al. 2015, arXiv:1506.02438), token level, with
 * observation tokens skipped as in verl's multi-turn `compute_gae_advantage_return`
 * (`algorithm.adv_estimator=gae`, `gamma`, `lam`). Over the policy tokens p_0 < p_1 < … of one
 * sequence (lossMask 1), with V(after the last policy token) = 0:
 *   δ_k = r[p_k] + γ·V[p_{k+1}] − V[p_k]
 *   A[p_k] = δ_k + γλ·A[p_{k+1}]          R[p_k] = A[p_k] + V[p_k]
 * Observation and prompt tokens (lossMask 0) take no part: their rewards and values are ignored
 * and their advantage and return are 0, so inserting them never changes a policy token's result.
 * values[t] is V(tokens[<t]) (alignment in src/core/loss.ts). verl then whitens the advantages
 * over the batch: call `whiten` (./whiten.ts) on the result for that. The recursion runs on rewards
 * and values divided by a power of two (../scaled-statistics.ts): ordinary inputs give the plain
 * values bit for bit; finite inputs of any size give finite results (saturating at ±MAX_VALUE).
 */
import { at } from '../../core/indexing.ts';
import { powerOfTwoScale, saturate } from '../scaled-statistics.ts';
import { assertInRange, assertSameShape } from '../sequences.ts';

export interface GaeOptions {
  tokenRewards: ArrayLike<number>;
  values: ArrayLike<number>;
  lossMask: ArrayLike<number>;
  /** Discount γ per policy token (verl default 1). */
  gamma?: number;
  /** GAE λ (verl default 1). */
  lambda?: number;
}

export function gae({ tokenRewards, values, lossMask, gamma = 1, lambda = 1 }: GaeOptions): {
  advantages: Float64Array;
  returns: Float64Array;
} {
  assertSameShape('tokenRewards', [tokenRewards], [lossMask]);
  assertSameShape('values', [values], [lossMask]);
  assertInRange('gamma', gamma, 0, 1);
  assertInRange('lambda', lambda, 0, 1);
  const length = lossMask.length;
  const advantages = new Float64Array(length);
  const returns = new Float64Array(length);
  const scale = Math.max(powerOfTwoScale(tokenRewards), powerOfTwoScale(values));
  let nextValue = 0; // every running quantity is divided by `scale`
  let nextAdvantage = 0;
  for (let t = length - 1; t >= 0; t--) {
    if (!(at(lossMask, t) > 0)) continue;
    const value = at(values, t) / scale;
    const delta = at(tokenRewards, t) / scale + gamma * nextValue - value;
    nextAdvantage = delta + gamma * lambda * nextAdvantage;
    nextValue = value;
    advantages[t] = saturate(nextAdvantage * scale);
    returns[t] = saturate((nextAdvantage + value) * scale);
  }
  return { advantages, returns };
}
