/**
 * The off-policy correction of an update (../algorithms/off-policy-correction.ts), when it is on:
 * one extra scoring pass gives the trainer's log-probs of every sample under the weights at the
 * start of the update (π_old, the proximal policy); they replace the sampler's as the PPO / CISPO
 * `oldLogprobs`, and the sampler's (π_behav) only set each token's weight w = π_old/π_behav,
 * truncated (tis) or masked (mis-token, mis-sequence) — verl's decoupled form with
 * `rollout_log_probs` (mismatch_helper.py). Off, the samples are trained exactly as sampled.
 *
 * On under 'auto' when the sampler is another engine (`samplerMatchesTrainer === false`) or a
 * trajectory is stale: sampled at `policyVersion` v while the trainer holds version
 * iteration − 1 (a version = the updates taken; the asynchronous loop, rl-async.ts).
 */
import { at } from '../core/indexing.ts';
import type { Trajectory } from '../core/types.ts';
import {
  correctionActive,
  offPolicyWeights,
  type CorrectionMethod,
  type OffPolicyCorrectionConfig,
} from '../algorithms/index.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import type { TrainingSample } from './rl-update.ts';

/** The most policy versions any trajectory lags the trainer at `iteration` (0 without versions: the synchronous loop). */
export function updateStaleness(trajectories: readonly Trajectory[], iteration: number): number {
  let staleness = 0;
  for (const t of trajectories)
    if (t.policyVersion !== undefined) staleness = Math.max(staleness, iteration - 1 - t.policyVersion);
  return staleness;
}

/** The correction an update applies (null = none): the config's mode, the backend, the batch's staleness. */
export function updateCorrection(
  correction: OffPolicyCorrectionConfig,
  policy: Pick<TrainablePolicy, 'samplerMatchesTrainer'>,
  trajectories: readonly Trajectory[],
  iteration: number,
  samplerMatchesTrainer = policy.samplerMatchesTrainer,
): CorrectionMethod | null {
  return correctionActive(correction, { samplerMatchesTrainer }, updateStaleness(trajectories, iteration));
}

/**
 * The samples with the trainer's π_old as `oldLogprobs`, the corrected loss mask and the weights,
 * and the `offPolicy/*` metrics of the whole batch.
 */
export async function correctSamples(
  policy: Pick<TrainablePolicy, 'logprobs'>,
  samples: readonly TrainingSample[],
  method: CorrectionMethod,
  correction: OffPolicyCorrectionConfig,
  temperature: number,
): Promise<{ samples: TrainingSample[]; scalars: Record<string, number> }> {
  const trainer = await policy.logprobs({ sequences: samples.map((s) => s.tokens), temperature });
  const { weights, lossMask, metrics } = offPolicyWeights({
    ...correction,
    method,
    behaviourLogprobs: samples.map((s) => s.oldLogprobs),
    trainerLogprobs: trainer,
    lossMask: samples.map((s) => s.lossMask),
  });
  const corrected = samples.map((sample, i) => ({
    ...sample,
    oldLogprobs: at(trainer, i, 'trainer log-probs'),
    lossMask: Array.from(at(lossMask, i, 'corrected loss mask')),
    importanceWeights: at(weights, i, 'importance weights'),
  }));
  return {
    samples: corrected,
    scalars: {
      'offPolicy/absLogprobDelta/max': metrics.maxAbsLogprobDelta,
      'offPolicy/absLogprobDelta/mean': metrics.meanAbsLogprobDelta,
      'offPolicy/truncated': metrics.truncatedFraction,
      'offPolicy/masked': metrics.maskedFraction,
      'offPolicy/weight/mean': metrics.weightMean,
    },
  };
}
