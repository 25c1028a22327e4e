/**
 * A rubric applied to finished episodes (the trainer's and the gateway's side): each task group is
 * scored together (`rubric.scoreGroup`, so group rewards such as a relative judge see the whole
 * group), and the rubric's total becomes the episode's reward.
 *
 * Where the total sits. Let w = the rubric's weight of the built-in `envReward` component (0 when
 * the rubric has none) and r_k the env's reward of turn k. Each turn keeps w · r_k on its last
 * generated token (where the env put r_k), and the rest of the total, total − w · Σ_k r_k, is added
 * on the LAST generated token of the episode (the last turn's). So `tokenRewards` and
 * `turns[k].reward` sum to the total, `totalReward` is the total, and:
 * - without `envReward` the env's per-turn rewards are replaced by the rubric's total on the last token;
 * - with `envReward` (weight w) the env's per-turn rewards stay where they were, scaled by w.
 * `success` stays the env's. `rewardComponents` is the env's components (when it reports them) and
 * the rubric's, a rubric name replacing an env component of the same name.
 *
 * A failure (a component that threw or returned a non-finite number, or an env component that was
 * not finite) is kept in `rewardFailures`; such an episode keeps the env's own reward (it is not
 * scored 0), and its whole group is left out of the update (`withoutFailedGroups`) and counted.
 */
import type { Trajectory } from '../core/types.ts';
import type { EpisodeContext } from './episode-context.ts';
import type { Rubric, RubricScore } from './rubric.ts';

/** The rubric's name for the env's own total reward (see builtin-rewards.ts). */
export const envRewardName = 'envReward';

/** Scores each group of `contexts` (grouped by trajectory.groupId, first appearance order) and returns the rescored trajectories, in order. */
export async function scoreEpisodes<Task>(
  rubric: Rubric<EpisodeContext<Task>>,
  contexts: readonly EpisodeContext<Task>[],
): Promise<Trajectory[]> {
  const groups = new Map<string, number[]>();
  contexts.forEach((context, i) => {
    const members = groups.get(context.trajectory.groupId) ?? [];
    members.push(i);
    groups.set(context.trajectory.groupId, members);
  });
  const scores = new Array<RubricScore>(contexts.length);
  await Promise.all(
    [...groups.values()].map(async (members) => {
      const scored = await rubric.scoreGroup(members.map((i) => contexts[i] as EpisodeContext<Task>));
      members.forEach((i, k) => {
        scores[i] = scored[k] ?? { ok: false, components: {}, failures: { rubric: 'no score' } };
      });
    }),
  );
  const envWeight = rubric.weights[envRewardName] ?? 0;
  return contexts.map((context, i) => applyScore(context.trajectory, scores[i] as RubricScore, envWeight));
}

/** The trajectory with the rubric's score placed as described in the header. */
export function applyScore(trajectory: Trajectory, score: RubricScore, envWeight: number): Trajectory {
  const rewardComponents = { ...trajectory.rewardComponents, ...score.components };
  if (!score.ok) {
    return { ...trajectory, rewardComponents, rewardFailures: { ...trajectory.rewardFailures, ...score.failures } };
  }
  const scaled = (r: number) => (envWeight === 0 ? 0 : envWeight * r);
  const rest = score.total - scaled(trajectory.totalReward);
  const turns = trajectory.turns.map((turn) => ({ ...turn, reward: scaled(turn.reward) }));
  const tokenRewards = trajectory.tokenRewards.map(scaled);
  const last = turns.at(-1);
  if (last !== undefined) {
    last.reward += rest;
    tokenRewards[last.end - 1] = (tokenRewards[last.end - 1] ?? 0) + rest;
  }
  return { ...trajectory, turns, tokenRewards, totalReward: score.total, rewardComponents };
}

/** Whether any episode of the trajectory's group has a reward failure, per groupId. */
export function failedGroups(trajectories: readonly Trajectory[]): Set<string> {
  return new Set(trajectories.filter((t) => t.rewardFailures !== undefined).map((t) => t.groupId));
}

/** The trajectories whose group has no reward failure (a failed episode takes its whole group out of the update). */
export function withoutFailedGroups(trajectories: readonly Trajectory[]): Trajectory[] {
  const failed = failedGroups(trajectories);
  return failed.size === 0 ? [...trajectories] : trajectories.filter((t) => !failed.has(t.groupId));
}
