/**
 * GSPO, Group Sequence Policy Optimization (Zheng et al. 2025, arXiv:2507.18071), in verl's
 * stop-gradient token form `compute_policy_loss_gspo` (`policy_loss.loss_mode=gspo`). For
 * sequence i with policy tokens y_i:
 *   s_i = exp(min(10, mean_{t∈y_i}(logp − old)))                     (sequence ratio)
 *   s_{i,t} = sg[s_i]·π(y_t)/sg[π(y_t)]  — numerically s_i, ds_{i,t}/dlogp_t = s_i
 *   ℓ_t = max(−A_t·s_{i,t}, −A_t·clip(s_{i,t}, 1 − ε_low, 1 + ε_high))       (no dual clip)
 * aggregated seq-mean-token-mean by default (verl hard-codes it). With advantages constant over
 * a sequence (GRPO-style) and weights constant within it (every mode here), the token form's
 * gradient equals the exact gradient of the sequence-level objective Σ_i w_i·max(−A_i s_i, …),
 * since ds_i/dlogp_t = s_i/|y_i|, and the |y_i| tokens each contribute s_i. The paper uses
 * ε_low 3e-4, ε_high 4e-4; the defaults here are verl's actor defaults (0.2).
 */
import { at } from '../../core/indexing.ts';
import { aggregate } from '../aggregation.ts';
import { assertInRange, assertSameShape, weightTokens } from '../sequences.ts';
import type { PolicyLossOptions, PolicyLossResult } from './ppo-clip.ts';

export function gspoLoss({
  logprobs,
  oldLogprobs,
  advantages,
  lossMask,
  clipRatioLow = 0.2,
  clipRatioHigh = 0.2,
  lossAggMode = 'seq-mean-token-mean',
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
    let logRatioSum = 0;
    let tokens = 0;
    for (let t = 0; t < mask.length; t++) {
      const weight = at(mask, t);
      logRatioSum += weight * (at(logprobRow, t) - at(oldLogprobRow, t));
      tokens += weight;
    }
    const rawLogRatio = logRatioSum / Math.max(1, tokens);
    const logRatio = Math.min(10, rawLogRatio);
    const ratio = Math.exp(logRatio);
    const dRatio = rawLogRatio <= 10 ? ratio : 0;
    for (let t = 0; t < mask.length; t++) {
      const weight = at(mask, t);
      if (!(weight > 0)) continue;
      const advantage = at(advantageRow, t);
      const unclippedLoss = -advantage * ratio;
      const clippedLoss = -advantage * Math.min(high, Math.max(low, ratio));
      if (clippedLoss > unclippedLoss) {
        // Only reached with the sequence ratio outside [low, high] (inside, clip(s) = s): a constant.
        losses[t] = clippedLoss;
        clipped += weight;
      } else {
        losses[t] = unclippedLoss;
        derivative[t] = -advantage * dRatio;
      }
      const tokenLogRatio = at(logprobRow, t) - at(oldLogprobRow, t);
      count += weight;
      ppoKl += weight * -tokenLogRatio;
      approxKl += weight * (Math.exp(tokenLogRatio) - 1 - tokenLogRatio);
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
