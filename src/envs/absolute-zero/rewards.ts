/**
 * Absolute Zero's step reward as named components (issue 31; Zhao et al. 2025, "Absolute Zero:
 * Reinforced Self-play Reasoning with Zero Data", arXiv 2505.03335, eq. 4 for r_propose):
 *   R = solved + learnability − formatPenalty · invalid_action
 * `solved` (outcome, the solver role): the solve turn stated f(input); `learnability` (outcome,
 * the proposer role): r_propose = 1 − r̄ for the solver's solve rate 0 < r̄ < 1, else 0 (0 without
 * a solver); `invalid_action` (penalty): an unparsable turn. A rejected proposal pays nothing.
 */
import { reward } from '../../rewards/reward.ts';
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import { invalidActionReward, solvedReward } from '../step-reward.ts';

/** What the reward functions see of one self-play turn. */
export interface AbsoluteZeroStep {
  invalid: boolean;
  /** A solve turn that stated the output. */
  solved: boolean;
  /** The solver's solve rate of an accepted proposal (null: no proposal this turn, or no solver). */
  solveRate: number | null;
}

/** r_propose = 1 − r̄ for 0 < r̄ < 1, else 0. */
export function learnabilityReward(solveRate: number): number {
  return solveRate > 0 && solveRate < 1 ? 1 - solveRate : 0;
}

export function absoluteZeroRubric(options: { formatPenalty: number }): Rubric<AbsoluteZeroStep> {
  return rubric(
    [
      solvedReward<AbsoluteZeroStep>((step) => step.solved),
      reward<AbsoluteZeroStep>('learnability', (step) =>
        step.solveRate === null ? 0 : learnabilityReward(step.solveRate),
      ),
      invalidActionReward<AbsoluteZeroStep>((step) => step.invalid),
    ],
    [1, 1, -options.formatPenalty],
  );
}
