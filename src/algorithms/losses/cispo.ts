/**
 * CISPO, Clipped IS-weight Policy Optimization (MiniMax-M1, arXiv:2506.13585, eq. 4–5): REINFORCE
 * whose importance-sampling weight is clipped and detached, so that no token loses its gradient
 * (PPO-clip zeroes the gradient of a token once its ratio leaves the clip range). Per token:
 *   r  = exp(clamp(logp − old, ±20))                                      (as ppo-clip.ts)
 *   r̂  = clip(r, 1 − ε_low, 1 + ε_high)
 *   ℓ  = −sg(r̂)·A·logp          so   dℓ/dlogp = −r̂·A   (r̂ a constant: no gradient through r)
 * then aggregated (../aggregation.ts; the paper normalises by Σ_i |o_i|, i.e. token-mean). The
 * same per-token form as SkyRL `compute_policy_loss_cispo`, ART's default loss (`ppo: false`:
 * ε_low 1.0, ε_high 4.0) and TRL `loss_type="cispo"` (which clamps r at `epsilon_high` directly,
 * i.e. TRL ε_high = 1 + ε_high here). MiniMax-M1 imposes no lower bound ("setting ε_low^IS to a
 * large value"): ε_low = 1 here, r̂ ∈ [0, 1 + ε_high].
 * Metrics: clipfrac (share of tokens whose r was clipped, either side), clipfrac_lower = 0 (no dual
 * clip), ppo_kl, approx_kl and ratio_mean as ppo-clip.ts defines them.
 */
import { at } from '../../core/indexing.ts';
import { aggregate } from '../aggregation.ts';
import { assertInRange, assertSameShape, weightTokens } from '../sequences.ts';
import type { PolicyLossOptions, PolicyLossResult } from './ppo-clip.ts';

export function cispoLoss({
  logprobs,
  oldLogprobs,
  advantages,
  lossMask,
  clipRatioLow = 1,
  clipRatioHigh = 4,
  lossAggMode = 'token-mean',
  lossScaleFactor = null,
}: PolicyLossOptions): PolicyLossResult {
  assertSameShape('logprobs', logprobs, lossMask);
  assertSameShape('oldLogprobs', oldLogprobs, lossMask);
  assertSameShape('advantages', advantages, lossMask);
  assertInRange('clipRatioLow', clipRatioLow, 0, 1);
  assertInRange('clipRatioHigh', clipRatioHigh, 0, Number.MAX_VALUE);
  const low = 1 - clipRatioLow;
  const high = 1 + clipRatioHigh;
  let count = 0;
  let clipped = 0;
  let ppoKl = 0;
  let approxKl = 0;
  let ratioSum = 0;
  const tokenLosses: Float64Array[] = [];
  const derivatives: Float64Array[] = [];
  for (const [i, mask] of lossMask.entries()) {
    const advantageRow = at(advantages, i);
    const logprobRow = at(logprobs, i);
    const oldLogprobRow = at(oldLogprobs, i);
    const losses = new Float64Array(mask.length);
    const derivative = new Float64Array(mask.length);
    for (let t = 0; t < mask.length; t++) {
      const weight = at(mask, t);
      if (!(weight > 0)) continue;
      const advantage = at(advantageRow, t);
      const logprob = at(logprobRow, t);
      const logRatio = Math.min(20, Math.max(-20, logprob - at(oldLogprobRow, t)));
      const ratio = Math.exp(logRatio);
      const clippedRatio = Math.min(high, Math.max(low, ratio)); // sg(r̂): a constant of the loss
      if (clippedRatio !== ratio) clipped += weight;
      losses[t] = -clippedRatio * advantage * logprob;
      derivative[t] = -clippedRatio * advantage;
      count += weight;
      ppoKl += weight * -logRatio;
      approxKl += weight * (ratio - 1 - logRatio);
      ratioSum += weight * ratio;
    }
    tokenLosses.push(losses);
    derivatives.push(derivative);
  }
  const { value, weights } = aggregate(tokenLosses, lossMask, { mode: lossAggMode, lossScaleFactor });
  const per = (x: number): number => (count > 0 ? x / count : 0);
  return {
    loss: value,
    gradLogprobs: weightTokens(weights, derivatives),
    tokenLosses,
    metrics: {
      clipfrac: per(clipped),
      clipfrac_lower: 0,
      ppo_kl: per(ppoKl),
      approx_kl: per(approxKl),
      ratio_mean: per(ratioSum),
    },
  };
}
