/**
 * An env's step reward as named components (issue 31; DESIGN.md `src/rewards/`): the env scores
 * its rubric on the step's own context (what the action did, the episode after it). The step's
 * reward is the rubric total R = Σ_i w_i · r_i, and `info.rewardComponents` keeps every raw r_i
 * under its name, so the trainer, the store and the reward-hacking monitor see what paid.
 *
 * A reward function that throws or gives a non-finite number is not scored 0: the step rejects
 * with `RewardComponentError`, naming the component and why (as any other env failure does).
 *
 * Names shared by the envs: `invalid_action` (penalty: 1 on a turn whose action did not parse or
 * was not allowed; weight −formatPenalty), `solved` (outcome: 1 when the task is solved).
 */
import type { StepResult } from '../core/types.ts';
import { reward, type RewardFunction } from '../rewards/reward.ts';
import type { Rubric } from '../rewards/rubric.ts';
import { RewardComponentError } from './errors.ts';

/** A step result before its reward is scored. */
export type UnscoredStep = Omit<StepResult, 'reward'>;

/** Scores `rubric` on `context` and returns `step` with the total as its reward and the components in `info`. */
export async function scoreStep<C>(
  envName: string,
  rubric: Rubric<C>,
  context: C,
  step: UnscoredStep,
): Promise<StepResult> {
  const score = await rubric.score(context);
  if (!score.ok) throw new RewardComponentError(envName, score.failures);
  return { ...step, reward: score.total, info: { ...step.info, rewardComponents: score.components } };
}

/** `invalid_action` (penalty): 1 on an invalid turn, else 0; weigh it −formatPenalty. */
export function invalidActionReward<C>(isInvalid: (context: C) => boolean): RewardFunction<C> {
  return reward<C>('invalid_action', (context) => (isInvalid(context) ? 1 : 0), { kind: 'penalty' });
}

/** `solved` (outcome): 1 when the step solved the task, else 0. */
export function solvedReward<C>(isSolved: (context: C) => boolean): RewardFunction<C> {
  return reward<C>('solved', (context) => (isSolved(context) ? 1 : 0), { kind: 'outcome' });
}
