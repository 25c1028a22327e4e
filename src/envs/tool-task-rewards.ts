/**
 * The reward functions every tool-task env shares (tool-task.ts, step-reward.ts): `solved`
 * (outcome: the answer turn's verdict) and `invalid_action` (penalty: a turn that did not parse,
 * called an unknown tool or gave it bad arguments), and the rubric of an env paid for the right
 * answer alone: R = solved − formatPenalty · invalid_action. For shaping, `call_format` (format):
 * the episode's first well-formed tool call (a known tool, arguments its schema accepts — whether
 * or not the tool then threw), paid once, on its turn.
 */
import { reward, type RewardFunction } from '../rewards/reward.ts';
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

/** An episode that records the turn of its first well-formed tool call (set by the env's `afterToolCall`). */
export interface FirstCallEpisode {
  turnsUsed: number;
  /** The turn of the episode's first tool call that reached its tool (null: none yet). */
  firstCallTurn: number | null;
}

/** `call_format` (format): 1 on the turn of the episode's first well-formed tool call, else 0 (later calls are not paid again). */
export function firstWellFormedCall<Episode extends FirstCallEpisode>(): RewardFunction<ToolTaskStep<Episode>> {
  return reward<ToolTaskStep<Episode>>(
    'call_format',
    ({ episode, turn }) => (turn.kind === 'tool' && episode.firstCallTurn === episode.turnsUsed ? 1 : 0),
    { kind: 'format' },
  );
}
