/**
 * Statistics of an iteration's sampled episodes that the trainer does not report itself, derived
 * by the run recorder from the trajectories it already receives:
 *
 * - `responseLength`, `responseLengthMax`: generated tokens (loss mask 1) per episode, mean and max
 *   — a policy that rambles, or collapses to empty replies, shows here first;
 * - `sampledTokens`: generated tokens of all the iteration's episodes (the dashboard's token axis);
 * - `rewardStdWithinGroup`: the mean over task groups of the population std of the episodes'
 *   returns — GRPO's signal: a group whose episodes all score alike has zero advantage;
 * - `uniformRewardGroupFraction`: the share of groups whose episodes all scored the same.
 *
 * The group statistics count groups of two or more episodes and are left out when there are none.
 */
import type { Trajectory } from '../core/types.ts';

export interface EpisodeStatistics {
  responseLength: number;
  responseLengthMax: number;
  sampledTokens: number;
  rewardStdWithinGroup?: number;
  uniformRewardGroupFraction?: number;
}

export function episodeStatistics(
  trajectories: readonly Pick<Trajectory, 'lossMask' | 'groupId' | 'totalReward'>[],
): EpisodeStatistics | undefined {
  if (trajectories.length === 0) return undefined;
  const lengths = trajectories.map((t) => t.lossMask.reduce((sum, m) => sum + m, 0));
  const sampledTokens = lengths.reduce((a, b) => a + b, 0);
  const statistics: EpisodeStatistics = {
    responseLength: sampledTokens / lengths.length,
    responseLengthMax: Math.max(...lengths),
    sampledTokens,
  };
  const groups = new Map<string, number[]>();
  for (const t of trajectories) groups.set(t.groupId, [...(groups.get(t.groupId) ?? []), t.totalReward]);
  const spreads = [...groups.values()].filter((rewards) => rewards.length > 1).map(populationStd);
  if (spreads.length > 0) {
    statistics.rewardStdWithinGroup = spreads.reduce((a, b) => a + b, 0) / spreads.length;
    statistics.uniformRewardGroupFraction = spreads.filter((spread) => spread === 0).length / spreads.length;
  }
  return statistics;
}

function populationStd(values: readonly number[]): number {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / values.length);
}
