/**
 * Dynamic sampling over groups of trajectories sampled for the same task.
 *  - DAPO (Yu et al. 2025, arXiv:2503.14476; verl `algorithm.filter_groups`): drop every group
 *    whose rewards are all equal — its group-normalised advantages are all 0, so it carries no
 *    gradient and only dilutes the batch. A group of one is kept, as verl keeps it (`std > 0 or
 *    len == 1`): one sample says nothing about the variance, and GRPO gives it mean 0 and std 1,
 *    so its advantage is its own reward — dropping it would drop every sample when G = 1.
 *    The trainer refills the batch to its target number of groups (src/train/rl-collect.ts).
 *  - RAGEN rollout filtering (Wang et al. 2025, arXiv:2504.20073; `rollout_filter_ratio`):
 *    optionally keep only the ⌈fraction·G⌉ groups (of the G left) with the highest reward
 *    variance; ties go to the group seen first.
 * Returns the kept trajectory indices in their original order.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { groupMembers } from './advantages/grpo.ts';
import { assertInRange } from './sequences.ts';

export interface GroupFilterResult {
  /** Indices of the trajectories kept, ascending. */
  kept: number[];
  keptGroups: number;
  /** Groups dropped because their rewards did not vary. */
  uniformGroups: number;
  /** Groups dropped by `keepTopFraction`. */
  lowVarianceGroups: number;
}

export function filterGroups({
  groupIds,
  rewards,
  keepTopFraction = 1,
}: {
  /** One key per trajectory; trajectories of the same task share it. */
  groupIds: readonly (string | number)[];
  /** One scalar reward per trajectory (e.g. its total reward). */
  rewards: readonly number[];
  /** Share of the varying groups to keep, by reward variance (1 = all). */
  keepTopFraction?: number;
}): GroupFilterResult {
  if (groupIds.length !== rewards.length) {
    throw new InvalidArgumentError(
      `groupIds has ${groupIds.length} entries but rewards has ${rewards.length}; give one of each per trajectory`,
      {
        groupIds: groupIds.length,
        rewards: rewards.length,
      },
    );
  }
  assertInRange('keepTopFraction', keepTopFraction, 0, 1);
  const varying: { members: number[]; variance: number }[] = [];
  let uniformGroups = 0;
  for (const members of groupMembers(groupIds).values()) {
    const values = members.map((i) => at(rewards, i, 'rewards'));
    if (values.length > 1 && values.every((r) => r === values[0])) {
      uniformGroups += 1;
      continue;
    }
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    varying.push({ members, variance: values.reduce((a, r) => a + (r - mean) ** 2, 0) / values.length });
  }
  const keepCount = keepTopFraction >= 1 ? varying.length : Math.ceil(keepTopFraction * varying.length);
  const ranked = varying
    .map((group, order) => ({ ...group, order }))
    .sort((a, b) => b.variance - a.variance || a.order - b.order);
  const keptGroups = ranked.slice(0, keepCount);
  return {
    kept: keptGroups.flatMap((group) => group.members).sort((a, b) => a - b),
    keptGroups: keptGroups.length,
    uniformGroups,
    lowVarianceGroups: varying.length - keptGroups.length,
  };
}
