/**
 * Sokoban's step reward as named components (issue 31), gym-sokoban / RAGEN's per-move reward:
 *   R = −0.1 · step_cost + 1 · box_on_target − 1 · box_off_target + 10 · solved − formatPenalty · invalid_action
 * `step_cost` (penalty): steps the turn used (each move, or 1 for an invalid turn);
 * `box_on_target` / `box_off_target` (shaping): boxes pushed onto / off a target this turn;
 * `solved` (outcome): every box on a target; `invalid_action` (penalty): the answer did not parse.
 * A turn of several moves (maxActionsPerTurn > 1) sums its moves' costs and pushes before
 * weighting, so its total may differ from a move-by-move running sum in the last bit of the float.
 */
import { reward } from '../../rewards/reward.ts';
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import { invalidActionReward, solvedReward } from '../step-reward.ts';

/** gym-sokoban's reward per event (the component weights). */
export const sokobanRewards = { step: -0.1, boxOnTarget: 1, boxOffTarget: -1, solved: 10 } as const;

/** What the reward functions see of one Sokoban turn. */
export interface SokobanStep {
  invalid: boolean;
  /** Steps used: moves made, or 1 for an invalid turn. */
  steps: number;
  boxesOnTarget: number;
  boxesOffTarget: number;
  solved: boolean;
}

export function sokobanRubric(options: { formatPenalty: number }): Rubric<SokobanStep> {
  return rubric(
    [
      reward<SokobanStep>('step_cost', (step) => step.steps, { kind: 'penalty' }),
      reward<SokobanStep>('box_on_target', (step) => step.boxesOnTarget, { kind: 'shaping' }),
      reward<SokobanStep>('box_off_target', (step) => step.boxesOffTarget, { kind: 'shaping' }),
      solvedReward<SokobanStep>((step) => step.solved),
      invalidActionReward<SokobanStep>((step) => step.invalid),
    ],
    [
      sokobanRewards.step,
      sokobanRewards.boxOnTarget,
      sokobanRewards.boxOffTarget,
      sokobanRewards.solved,
      -options.formatPenalty,
    ],
  );
}
