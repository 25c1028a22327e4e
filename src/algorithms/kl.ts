/**
 * KL estimators between the policy (logp) and a reference policy (ref), per token, as verl
 * `kl_penalty` (`kl_loss_type` / `kl_penalty`), from Schulman's "Approximating KL divergence"
 * (http://joschu.net/blog/kl-approx.html). Each comes with its derivative d/dlogp:
 *   k1  (kl)          logp − ref                                   d = 1
 *   abs               |logp − ref|                                 d = sign(logp − ref)
 *   k2  (mse)         ½(logp − ref)²                               d = logp − ref
 *   k3  (low_var_kl)  x = clamp(ref − logp, ±20); clamp(eˣ − x − 1, ±10)
 *                                                                  d = 1 − eˣ (0 where clamped)
 * `klPenaltyLoss` is the KL-in-loss term (verl `use_kl_loss`), `klInReward` the reward shaping
 * (verl `use_kl_in_reward`): r[t] − coef·kl(old[t], ref[t]) on policy tokens.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { aggregate, type LossAggMode } from './aggregation.ts';
import { assertSameShape, weightTokens, type Sequences } from './sequences.ts';

export const klEstimators = ['k1', 'abs', 'k2', 'k3', 'kl', 'mse', 'low_var_kl'] as const;
export type KlEstimator = (typeof klEstimators)[number];

/** The estimate at one token and its derivative with respect to logp. */
export function klEstimate(
  logprob: number,
  refLogprob: number,
  estimator: KlEstimator,
): { value: number; derivative: number } {
  const diff = logprob - refLogprob;
  switch (estimator) {
    case 'k1':
    case 'kl':
      return { value: diff, derivative: 1 };
    case 'abs':
      return { value: Math.abs(diff), derivative: Math.sign(diff) };
    case 'k2':
    case 'mse':
      return { value: 0.5 * diff * diff, derivative: diff };
    case 'k3':
    case 'low_var_kl': {
      const raw = -diff;
      const x = Math.min(20, Math.max(-20, raw));
      const xPassesClamp = raw >= -20 && raw <= 20;
      const kl = Math.exp(x) - x - 1;
      const value = Math.min(10, Math.max(-10, kl));
      const klPassesClamp = kl >= -10 && kl <= 10;
      // d/dlogp (eˣ − x − 1) = (eˣ − 1)·dx/dlogp = −(eˣ − 1)
      return { value, derivative: xPassesClamp && klPassesClamp ? 1 - Math.exp(x) : 0 };
    }
    default:
      throw new InvalidArgumentError(
        `unknown KL estimator "${String(estimator)}"; allowed: ${klEstimators.join(', ')}`,
        {
          estimator,
          allowed: klEstimators,
        },
      );
  }
}

/** The KL-in-loss term: aggregate of kl(logp, ref) over the masked tokens, and its gradient. */
export function klPenaltyLoss({
  logprobs,
  refLogprobs,
  lossMask,
  estimator = 'k3',
  lossAggMode = 'token-mean',
  lossScaleFactor = null,
}: {
  logprobs: Sequences;
  refLogprobs: Sequences;
  lossMask: Sequences;
  /** verl `kl_loss_type`, default low_var_kl (k3). */
  estimator?: KlEstimator;
  lossAggMode?: LossAggMode;
  lossScaleFactor?: number | null;
}): { loss: number; gradLogprobs: Float64Array[]; metrics: { kl: number } } {
  assertSameShape('logprobs', logprobs, lossMask);
  assertSameShape('refLogprobs', refLogprobs, lossMask);
  const values: Float64Array[] = [];
  const derivatives: Float64Array[] = [];
  for (const [i, mask] of lossMask.entries()) {
    const logprobRow = at(logprobs, i);
    const refLogprobRow = at(refLogprobs, i);
    const value = new Float64Array(mask.length);
    const derivative = new Float64Array(mask.length);
    for (let t = 0; t < mask.length; t++) {
      if (!(at(mask, t) > 0)) continue;
      const k = klEstimate(at(logprobRow, t), at(refLogprobRow, t), estimator);
      value[t] = k.value;
      derivative[t] = k.derivative;
    }
    values.push(value);
    derivatives.push(derivative);
  }
  const { value, weights } = aggregate(values, lossMask, { mode: lossAggMode, lossScaleFactor });
  const gradLogprobs = weightTokens(weights, derivatives);
  return { loss: value, gradLogprobs, metrics: { kl: value } };
}

/**
 * Reward shaping: r'[t] = r[t] − coef·kl(old[t], ref[t])·mask[t] (verl `apply_kl_penalty`,
 * `algorithm.kl_ctrl.kl_coef` default 0.001, `kl_penalty` default kl = k1). `kl` is the batch mean
 * of each sequence's masked-mean estimate, the value verl logs and feeds an adaptive controller.
 */
export function klInReward({
  tokenRewards,
  oldLogprobs,
  refLogprobs,
  lossMask,
  coef = 0.001,
  estimator = 'k1',
}: {
  tokenRewards: Sequences;
  oldLogprobs: Sequences;
  refLogprobs: Sequences;
  lossMask: Sequences;
  coef?: number;
  estimator?: KlEstimator;
}): { tokenRewards: Float64Array[]; kl: number } {
  assertSameShape('tokenRewards', tokenRewards, lossMask);
  assertSameShape('oldLogprobs', oldLogprobs, lossMask);
  assertSameShape('refLogprobs', refLogprobs, lossMask);
  let klSum = 0;
  const shaped = lossMask.map((mask, i) => {
    const out = Float64Array.from(at(tokenRewards, i));
    const oldLogprobRow = at(oldLogprobs, i);
    const refLogprobRow = at(refLogprobs, i);
    let sequenceKl = 0;
    let count = 0;
    for (let t = 0; t < mask.length; t++) {
      const weight = at(mask, t);
      if (!(weight > 0)) continue;
      const kl = klEstimate(at(oldLogprobRow, t), at(refLogprobRow, t), estimator).value * weight;
      out[t] = at(out, t) - coef * kl;
      sequenceKl += kl;
      count += weight;
    }
    klSum += count > 0 ? sequenceKl / count : 0;
    return out;
  });
  return { tokenRewards: shaped, kl: lossMask.length > 0 ? klSum / lossMask.length : 0 };
}
