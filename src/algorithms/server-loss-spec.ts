/**
 * When the RL loss is exactly a loss a remote trainer computes itself (Tinker's server-side
 * losses, "Loss functions" in its docs; tinker 0.38.0 `LossFnType`), its `ServerLossSpec`
 * (src/core/loss.ts): the backend then sends ONE forward_backward with the old log-probs instead
 * of a forward, a local `compute` and a weighted backward.
 *
 *   cispo (./losses/cispo.ts)       ℓ = −sg(clip(r, 1−ε_low, 1+ε_high))·A·logp      = Tinker `cispo`
 *   ppo-clip without dual clip      ℓ = −min(r·A, clip(r, 1−ε_low, 1+ε_high)·A)      = Tinker `ppo`  (Schulman et al. 2017)
 *
 * Both are linear in A, so the aggregation (./aggregation.ts, L = Σ w·ℓ) folds into the advantages:
 * A'_t = A_t·w_t. Not exact, so not offered: GSPO (sequence ratio), PPO's dual clip (`clipRatioC`),
 * off-policy importance weights, a KL or entropy term, a value loss.
 */
import type { ServerLossSpec } from '../core/loss.ts';
import { aggregationWeights } from './aggregation.ts';
import type { RlBatch, RlLossConfig } from './rl-loss.ts';
import { toFloat32 } from './sequences.ts';

export function serverLossSpec(batch: RlBatch, config: RlLossConfig): ServerLossSpec | undefined {
  const exact =
    (config.policyLoss === 'cispo' || (config.policyLoss === 'ppo-clip' && config.clipRatioC === null)) &&
    batch.importanceWeights === undefined &&
    batch.returns === undefined &&
    !config.useKlLoss &&
    config.entropyCoef === 0;
  if (!exact) return undefined;
  const weights = aggregationWeights(batch.lossMask, {
    mode: config.lossAggMode,
    lossScaleFactor: config.lossScaleFactor,
  });
  const advantages = weights.map((row, i) => {
    const advantage = batch.advantages[i];
    const scaled = new Float32Array(row.length);
    for (let t = 0; t < row.length; t++) scaled[t] = (row[t] ?? 0) === 0 ? 0 : (advantage?.[t] ?? 0) * (row[t] ?? 0);
    return scaled;
  });
  return {
    lossFunction: config.policyLoss === 'cispo' ? 'cispo' : 'ppo',
    advantages,
    samplingLogprobs: toFloat32(batch.oldLogprobs),
    clip: { low: 1 - config.clipRatioLow, high: 1 + config.clipRatioHigh },
  };
}
