/**
 * FrozenLake's step reward as named components (issue 31; RAGEN's reward):
 *   R = solved − formatPenalty · invalid_action
 * `solved` (outcome): the turn's moves reached the goal; `invalid_action` (penalty): the answer did
 * not parse.
 */
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import { invalidActionReward, solvedReward } from '../step-reward.ts';

/** What the reward functions see of one FrozenLake turn. */
export interface FrozenLakeStep {
  invalid: boolean;
  reachedGoal: boolean;
}

export function frozenLakeRubric(options: { formatPenalty: number }): Rubric<FrozenLakeStep> {
  return rubric(
    [
      solvedReward<FrozenLakeStep>((step) => step.reachedGoal),
      invalidActionReward<FrozenLakeStep>((step) => step.invalid),
    ],
    [1, -options.formatPenalty],
  );
}
