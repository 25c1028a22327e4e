/**
 * The reward functions every tool-task env shares (tool-task.ts, step-reward.ts): `solved`
 * (outcome: the answer turn's verdict) and `invalid_action` (penalty: a turn that did not parse,
 * called an unknown tool or gave it bad arguments), and the rubric of an env paid for the right
 * answer alone: R = solved − formatPenalty · invalid_action.
 */
import type { RewardFunction } from '../rewards/reward.ts';
import { rubric, type Rubric } from '../rewards/rubric.ts';
import { invalidActionReward, solvedReward } from './step-reward.ts';
import type { ToolTaskStep } from './tool-task.ts';

/** `solved` (outcome): 1 on an answer turn whose verdict is a success. */
export function answerSolved<Episode>(): RewardFunction<ToolTaskStep<Episode>> {
  return solvedReward((step) => step.turn.kind === 'answer' && step.turn.success);
}

/** `invalid_action` (penalty): 1 on an invalid turn. */
export function invalidTurn<Episode>(): RewardFunction<ToolTaskStep<Episode>> {
  return invalidActionReward((step) => step.turn.kind === 'invalid');
}

/** solved (weight 1) and invalid_action (weight −formatPenalty). */
export function answerRubric<Episode>(formatPenalty: number): Rubric<ToolTaskStep<Episode>> {
  return rubric([answerSolved<Episode>(), invalidTurn<Episode>()], [1, -formatPenalty]);
}
