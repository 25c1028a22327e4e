/**
 * What an RL iteration's update takes besides its trajectories, the same for the synchronous and
 * the asynchronous loop: the learning rate of the schedule at this iteration, and the hook that hands
 * the per-token advantages to `onAdvantages` (run stores).
 */
import type { Trajectory } from '../core/types.ts';
import type { TrainingSample } from './rl-update.ts';
import type { RlConfig, RlRunOptions } from './rl.ts';
import { learningRateAt } from './schedule.ts';
import { trajectoryAdvantages } from './trajectory-advantages.ts';

export function iterationLearningRate(config: RlConfig, iteration: number): number {
  return learningRateAt(iteration, {
    peak: config.learningRate,
    totalSteps: config.iterations,
    warmupSteps: config.warmupIterations,
    minRatio: 1,
  });
}

/** `onSamples` for `updatePolicy`: the samples' advantages as per-token arrays of each kept trajectory. */
export function advantagesHook(
  onAdvantages: RlRunOptions<unknown>['onAdvantages'],
  trajectories: readonly Trajectory[],
  iteration: number,
): ((samples: TrainingSample[]) => void | Promise<void>) | undefined {
  return (
    onAdvantages &&
    ((samples: TrainingSample[]) => onAdvantages(trajectories, trajectoryAdvantages(trajectories, samples), iteration))
  );
}
