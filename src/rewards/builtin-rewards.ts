/**
 * Named rewards over a finished episode (`EpisodeContext`) that need nothing but the episode:
 *
 * - `envReward` (outcome): the env's own total reward, Σ_k r_k. In a rubric it keeps the env's
 *   per-turn rewards where the env put them, scaled by its weight (trajectory-scoring.ts).
 * - `envSuccess` (outcome): 1 when the env said the task is solved, else 0.
 * - `actionFormat` (format): the fraction of turns whose action the env could parse and allowed
 *   (`info.invalidAction` false) — the env's action format, or its tool-call schema when the rollout
 *   speaks the model's tool protocol (a malformed call is an invalid action); 0 for no turn.
 * - `overlong` (penalty): DAPO's soft overlong punishment (Yu et al. 2025, arXiv:2503.14476,
 *   eq. 13) on the episode's longest reply of L tokens, with L_max = `maxTokens`, L_cache = `cacheTokens`:
 *       0                              if L ≤ L_max − L_cache
 *       ((L_max − L_cache) − L) / L_cache  if L_max − L_cache < L ≤ L_max
 *       −1                             if L > L_max
 */
import { InvalidArgumentError } from '../core/errors.ts';
import type { EpisodeContext } from './episode-context.ts';
import { type RewardFunction, reward } from './reward.ts';
import { envRewardName } from './trajectory-scoring.ts';

export const envReward: RewardFunction<EpisodeContext> = reward(envRewardName, (c) => c.trajectory.totalReward);

export const envSuccess: RewardFunction<EpisodeContext> = reward('envSuccess', (c) => (c.trajectory.success ? 1 : 0));

export const actionFormat: RewardFunction<EpisodeContext> = reward(
  'actionFormat',
  ({ trajectory: { turns } }) => (turns.length === 0 ? 0 : turns.filter((t) => !t.invalidAction).length / turns.length),
  { kind: 'format' },
);

export interface OverlongOptions {
  /** L_max: the reply length (tokens) past which the penalty is −1 — the rollout's maxNewTokens. */
  maxTokens: number;
  /** L_cache: the band below L_max where the penalty ramps from 0 to −1. Default maxTokens / 4. */
  cacheTokens?: number;
}

export function overlongPenalty({
  maxTokens,
  cacheTokens = maxTokens / 4,
}: OverlongOptions): RewardFunction<EpisodeContext> {
  if (!(Number.isFinite(maxTokens) && maxTokens > 0 && cacheTokens > 0 && cacheTokens <= maxTokens)) {
    throw new InvalidArgumentError(
      `overlongPenalty: need maxTokens > 0 and 0 < cacheTokens <= maxTokens, got maxTokens ${maxTokens}, cacheTokens ${cacheTokens}`,
    );
  }
  const start = maxTokens - cacheTokens;
  return reward(
    'overlong',
    ({ trajectory: { turns } }) => {
      const longest = turns.reduce((most, turn) => Math.max(most, turn.end - turn.start), 0);
      if (longest <= start) return 0;
      return longest > maxTokens ? -1 : (start - longest) / cacheTokens;
    },
    { kind: 'penalty' },
  );
}

/** The built-in rewards by name (what `agentrl train --reward name=weight,…` picks from). */
export function builtinRewards({
  maxNewTokens,
}: {
  maxNewTokens: number;
}): Record<string, RewardFunction<EpisodeContext>> {
  const overlong = overlongPenalty({ maxTokens: maxNewTokens });
  return { envReward, envSuccess, actionFormat, overlong };
}
