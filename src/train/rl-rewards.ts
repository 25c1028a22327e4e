/**
 * `runRl({ rubric })`: each generation batch is scored by the rubric before dynamic sampling and
 * advantages (src/rewards/trajectory-scoring.ts says where the total sits in `tokenRewards` and what
 * happens to the env's per-turn rewards). Each group is scored together, so group rewards (a
 * relative judge) see the whole group. A rubric's context is the `EpisodeContext`: the trajectory,
 * the first observation's text, the task and the env's `privileged` (from the rollout; a `collect`
 * scaffold's episodes have prompt '' and no task or privileged).
 */
import type { Trajectory } from '../core/types.ts';
import type { EpisodeContext, Rubric } from '../rewards/index.ts';
import { scoreEpisodes } from '../rewards/trajectory-scoring.ts';
import type { EpisodeStart, RolloutStats } from '../rollout/index.ts';

export interface GeneratedBatch {
  trajectories: Trajectory[];
  /** Per trajectory, from the env rollout (absent for a `collect` scaffold). */
  episodes?: EpisodeStart[];
  stats: RolloutStats;
}

/** The batch with every trajectory rescored by `rubric`; `stats.meanReward` is the rubric's mean over the episodes it scored. */
export async function scoreBatch<Task>(
  rubric: Rubric<EpisodeContext<Task>>,
  batch: GeneratedBatch,
): Promise<{ trajectories: Trajectory[]; stats: RolloutStats }> {
  const contexts = batch.trajectories.map((trajectory, i): EpisodeContext<Task> => {
    const start = batch.episodes?.[i];
    return {
      trajectory,
      prompt: start?.prompt ?? '',
      ...(start?.task === undefined ? {} : { task: start.task as Task }),
      ...(start?.privileged === undefined ? {} : { privileged: start.privileged }),
    };
  });
  const trajectories = await scoreEpisodes(rubric, contexts);
  const scored = trajectories.filter((t) => t.rewardFailures === undefined);
  const meanReward = scored.length === 0 ? 0 : scored.reduce((sum, t) => sum + t.totalReward, 0) / scored.length;
  return { trajectories, stats: { ...batch.stats, meanReward } };
}
