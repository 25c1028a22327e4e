/**
 * PPO clipped policy loss (Schulman et al. 2017, arXiv:1707.06347) with asymmetric clipping
 * (DAPO clip-higher, arXiv:2503.14476) and dual clip (Ye et al. 2019, arXiv:1912.09729), as verl
 * `compute_policy_loss_vanilla` (`clip_ratio_low`, `clip_ratio_high`, `clip_ratio_c`). Per token:
 *   ratio = exp(clamp(logp − old, ±20))
 *   ℓ₁ = max(−A·ratio, −A·clip(ratio, 1 − ε_low, 1 + ε_high))
 *   ℓ  = min(ℓ₁, −A·c) when A < 0 and c is set, else ℓ₁
 * then aggregated (../aggregation.ts). dℓ/dlogp = −A·ratio on the unclipped branch, 0 on a
 * clipped one (or where the ±20 clamp bites): the clip branch wins only when clip(ratio) ≠ ratio,
 * i.e. with the ratio outside [1 − ε_low, 1 + ε_high], where the clipped term is constant. Metrics: clipfrac (share of tokens where the clip
 * branch is taken), clipfrac_lower (dual clip taken), ppo_kl = mean(old − logp) (verl),
 * approx_kl = mean(ratio − 1 − log ratio) (k3 of KL(old‖new), CleanRL), ratio_mean.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { aggregate, type LossAggMode } from '../aggregation.ts';
import { at } from '../../core/indexing.ts';
import { assertInRange, assertSameShape, weightTokens, type Sequences } from '../sequences.ts';

export interface PolicyLossOptions {
  /** Current log-probs (the variable). */
  logprobs: Sequences;
  /** Log-probs of the policy that sampled the batch. */
  oldLogprobs: Sequences;
  advantages: Sequences;
  lossMask: Sequences;
  /** ε_low (verl `clip_ratio_low`, default 0.2). */
  clipRatioLow?: number;
  /** ε_high (verl `clip_ratio_high`, default 0.2; DAPO uses 0.28). */
  clipRatioHigh?: number;
  lossAggMode?: LossAggMode;
  lossScaleFactor?: number | null;
}

export interface PolicyLossResult {
  loss: number;
  /** dLoss/dlogprobs (aggregation included). */
  gradLogprobs: Float64Array[];
  /** Per-token loss ℓ before aggregation. */
  tokenLosses: Float64Array[];
  metrics: { clipfrac: number; clipfrac_lower: number; ppo_kl: number; approx_kl: number; ratio_mean: number };
}

export function ppoClipLoss({
  logprobs,
  oldLogprobs,
  advantages,
  lossMask,
  clipRatioLow = 0.2,
  clipRatioHigh = 0.2,
  clipRatioC = 3,
  lossAggMode = 'token-mean',
  lossScaleFactor = null,
}: PolicyLossOptions & {
  /** Dual-clip bound c > 1 (verl `clip_ratio_c`, default 3); null disables it. */
  clipRatioC?: number | null;
}): PolicyLossResult {
  assertPolicyLossInputs({ logprobs, oldLogprobs, advantages, lossMask, clipRatioLow, clipRatioHigh, clipRatioC });
  const low = 1 - clipRatioLow;
  const high = 1 + clipRatioHigh;
  let count = 0;
  let clipped = 0;
  let clippedLower = 0;
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
      const rawLogRatio = at(logprobRow, t) - at(oldLogprobRow, t);
      const logRatio = Math.min(20, Math.max(-20, rawLogRatio));
      const ratio = Math.exp(logRatio);
      const dRatio = rawLogRatio >= -20 && rawLogRatio <= 20 ? ratio : 0;
      const unclippedLoss = -advantage * ratio;
      const clippedLoss = -advantage * Math.min(high, Math.max(low, ratio));
      let loss = unclippedLoss;
      let grad = -advantage * dRatio;
      if (clippedLoss > unclippedLoss) {
        // Only reached with the ratio outside [low, high] (inside, clip(ratio) = ratio): a constant.
        loss = clippedLoss;
        grad = 0;
        clipped += weight;
      }
      if (advantage < 0 && clipRatioC !== null && loss > -advantage * clipRatioC) {
        loss = -advantage * clipRatioC;
        grad = 0;
        clippedLower += weight;
      }
      losses[t] = loss;
      derivative[t] = grad;
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
      clipfrac_lower: per(clippedLower),
      ppo_kl: per(ppoKl),
      approx_kl: per(approxKl),
      ratio_mean: per(ratioSum),
    },
  };
}

/** Throws unless every per-token input has the loss mask's shape and the clip bounds are valid. */
function assertPolicyLossInputs(
  options: Pick<PolicyLossOptions, 'logprobs' | 'oldLogprobs' | 'advantages' | 'lossMask'> & {
    clipRatioLow: number;
    clipRatioHigh: number;
    clipRatioC: number | null;
  },
): void {
  const { logprobs, oldLogprobs, advantages, lossMask, clipRatioLow, clipRatioHigh, clipRatioC } = options;
  assertSameShape('logprobs', logprobs, lossMask);
  assertSameShape('oldLogprobs', oldLogprobs, lossMask);
  assertSameShape('advantages', advantages, lossMask);
  assertInRange('clipRatioLow', clipRatioLow, 0, 1);
  assertInRange('clipRatioHigh', clipRatioHigh, 0, Number.MAX_VALUE);
  if (clipRatioC !== null && !(clipRatioC > 1)) {
    throw new InvalidArgumentError(`clipRatioC must be a number > 1 or null (dual clip off), got ${clipRatioC}`, {
      clipRatioC,
    });
  }
}
