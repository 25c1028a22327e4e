/**
 * The calculator's step reward as named components (issue 31):
 *   R = solved + toolCallReward · tool_call − formatPenalty · invalid_action
 * `solved` (outcome): the exact integer (and, with requireToolCall, an earlier call that gave it);
 * `tool_call` (shaping): 1 on the turn of the first calculator call that evaluated to the answer;
 * `invalid_action` (penalty): an invalid turn.
 */
import { reward } from '../../rewards/reward.ts';
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import type { ToolTaskStep } from '../tool-task.ts';
import { answerSolved, invalidTurn } from '../tool-task-rewards.ts';
import type { CalculatorEpisode } from './env.ts';

type CalculatorStep = ToolTaskStep<CalculatorEpisode>;

const toolCall = reward<CalculatorStep>(
  'tool_call',
  ({ episode, turn }) => (turn.kind === 'tool' && episode.answerCallTurn === episode.turnsUsed ? 1 : 0),
  { kind: 'shaping' },
);

export function calculatorRubric(options: { toolCallReward: number; formatPenalty: number }): Rubric<CalculatorStep> {
  return rubric([answerSolved<CalculatorEpisode>(), toolCall, invalidTurn<CalculatorEpisode>()], {
    tool_call: options.toolCallReward,
    invalid_action: -options.formatPenalty,
  });
}
