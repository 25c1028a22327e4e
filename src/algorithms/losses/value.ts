/**
 * Clipped value loss (PPO2 / OpenAI baselines; verl `compute_value_loss`, `cliprange_value`
 * default 0.5). Per policy token, with V the current value, V_old the value at sampling, R the
 * return:
 *   V_c = clip(V, V_old − ε_v, V_old + ε_v)
 *   ℓ = ½·max((V − R)², (V_c − R)²)
 *   dℓ/dV = V − R on the first branch; 0 on the second, which wins only when V_c ≠ V, i.e. with V
 *           outside [V_old − ε_v, V_old + ε_v], where V_c is a constant.
 * then aggregated (../aggregation.ts). vf_clipfrac = share of tokens taking the clipped branch.
 */
import { at } from '../../core/indexing.ts';
import { aggregate, type LossAggMode } from '../aggregation.ts';
import { assertInRange, assertSameShape, weightTokens, type Sequences } from '../sequences.ts';

export function valueLoss({
  values,
  oldValues,
  returns,
  lossMask,
  clipRangeValue = 0.5,
  lossAggMode = 'token-mean',
  lossScaleFactor = null,
}: {
  values: Sequences;
  oldValues: Sequences;
  returns: Sequences;
  lossMask: Sequences;
  /** ε_v (verl `cliprange_value`, default 0.5). */
  clipRangeValue?: number;
  lossAggMode?: LossAggMode;
  lossScaleFactor?: number | null;
}): {
  loss: number;
  gradValues: Float64Array[];
  metrics: { vf_loss: number; vf_clipfrac: number; vpred_mean: number };
} {
  assertSameShape('values', values, lossMask);
  assertSameShape('oldValues', oldValues, lossMask);
  assertSameShape('returns', returns, lossMask);
  assertInRange('clipRangeValue', clipRangeValue, 0, Number.MAX_VALUE);
  let count = 0;
  let clipped = 0;
  let valueSum = 0;
  const tokenLosses: Float64Array[] = [];
  const derivatives: Float64Array[] = [];
  for (const [i, mask] of lossMask.entries()) {
    const valueRow = at(values, i);
    const oldValueRow = at(oldValues, i);
    const returnRow = at(returns, i);
    const losses = new Float64Array(mask.length);
    const derivative = new Float64Array(mask.length);
    for (let t = 0; t < mask.length; t++) {
      const weight = at(mask, t);
      if (!(weight > 0)) continue;
      const value = at(valueRow, t);
      const old = at(oldValueRow, t);
      const target = at(returnRow, t);
      const clippedValue = Math.min(old + clipRangeValue, Math.max(old - clipRangeValue, value));
      const unclippedError = (value - target) ** 2;
      const clippedError = (clippedValue - target) ** 2;
      if (clippedError > unclippedError) {
        // Only reached with V outside the clip range (inside, V_c = V): V_c is a constant.
        losses[t] = 0.5 * clippedError;
        clipped += weight;
      } else {
        losses[t] = 0.5 * unclippedError;
        derivative[t] = value - target;
      }
      count += weight;
      valueSum += weight * value;
    }
    tokenLosses.push(losses);
    derivatives.push(derivative);
  }
  const { value, weights } = aggregate(tokenLosses, lossMask, { mode: lossAggMode, lossScaleFactor });
  return {
    loss: value,
    gradValues: weightTokens(weights, derivatives),
    metrics: {
      vf_loss: value,
      vf_clipfrac: count > 0 ? clipped / count : 0,
      vpred_mean: count > 0 ? valueSum / count : 0,
    },
  };
}
