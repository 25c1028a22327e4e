/**
 * REINFORCE++ (Hu 2025, arXiv:2501.03262), as verl `compute_reinforce_plus_plus_outcome_advantage`
 * (`adv_estimator=reinforce_plus_plus`, `gamma`): per sequence, the discounted return over its
 * policy tokens p_0 < p_1 < … (reset at the end of every sequence)
 *   G[p_k] = r[p_k] + γ·G[p_{k+1}]
 * then whitened over all masked tokens of the batch: A = (G − μ)/sqrt(σ² + 1e-8) (./whiten.ts).
 * Observation tokens (lossMask 0) are skipped as in GAE: they neither discount nor carry reward.
 * (verl multiplies the running return by the mask, which would reset it at every observation
 * token of a multi-turn episode; skipping keeps later turns' rewards flowing back.)
 * The return runs on rewards divided by a power of two (../scaled-statistics.ts): ordinary rewards
 * give the plain values bit for bit, and finite rewards of any size give finite returns (a true
 * return beyond the doubles saturates at ±Number.MAX_VALUE) and finite advantages.
 */
import { at } from '../../core/indexing.ts';
import { powerOfTwoScale, saturate } from '../scaled-statistics.ts';
import { assertInRange, assertSameShape, type Sequences } from '../sequences.ts';
import { whiten } from './whiten.ts';

export function reinforcePlusPlusAdvantages({
  tokenRewards,
  lossMask,
  gamma = 1,
}: {
  tokenRewards: Sequences;
  lossMask: Sequences;
  /** Discount per policy token (verl default 1). */
  gamma?: number;
}): { advantages: Float64Array[]; returns: Float64Array[] } {
  assertSameShape('tokenRewards', tokenRewards, lossMask);
  assertInRange('gamma', gamma, 0, 1);
  const returns = lossMask.map((mask, i) => {
    const rewards = at(tokenRewards, i);
    const out = new Float64Array(mask.length);
    const scale = powerOfTwoScale(rewards);
    let running = 0; // G / scale
    for (let t = mask.length - 1; t >= 0; t--) {
      if (!(at(mask, t) > 0)) continue;
      running = at(rewards, t) / scale + gamma * running;
      out[t] = saturate(running * scale);
    }
    return out;
  });
  return { advantages: whiten(returns, lossMask), returns };
}
