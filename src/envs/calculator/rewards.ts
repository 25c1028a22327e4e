/**
 * The calculator's step reward as named components (issue 31; shaping for issue 34):
 *
 *   R = solved + callFormatReward · call_format + callOperandsReward · call_operands
 *         + toolCallReward · tool_call − formatPenalty · invalid_action
 *
 * `solved` (outcome): the exact integer (and, with requireToolCall, an earlier call that gave it);
 * `call_format` (format): the episode's first well-formed calculator call — in the model's own
 *   tool-call format when the rollout parses it, or agentrl's tag — whose arguments the tool's
 *   schema accepts, even if the expression then fails to evaluate;
 * `call_operands` (shaping): the first call whose expression holds the question's integers and
 *   operators (operation-match.ts: `23*37` for `37 * 23`);
 * `tool_call` (shaping): the first call whose expression evaluated to the answer;
 * `invalid_action` (penalty): an invalid turn.
 * Each shaping term is paid once, on its call's turn, and every weight but solved's defaults to 0:
 * the components are always scored (reward/<name> metrics) and only pay when weighted. Success —
 * what held-out tests count — is `solved` alone.
 */
import { reward } from '../../rewards/reward.ts';
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import type { ToolTaskStep } from '../tool-task.ts';
import { answerSolved, firstWellFormedCall, invalidTurn } from '../tool-task-rewards.ts';
import type { CalculatorEpisode } from './env.ts';

type CalculatorStep = ToolTaskStep<CalculatorEpisode>;

const paidOn = (callTurn: number | null, { episode, turn }: CalculatorStep): number =>
  turn.kind === 'tool' && callTurn === episode.turnsUsed ? 1 : 0;

const callOperands = reward<CalculatorStep>('call_operands', (step) => paidOn(step.episode.operandsCallTurn, step), {
  kind: 'shaping',
});

const toolCall = reward<CalculatorStep>('tool_call', (step) => paidOn(step.episode.answerCallTurn, step), {
  kind: 'shaping',
});

/** The weights of the calculator's reward components (env options of the same names). */
export interface CalculatorRewardWeights {
  callFormatReward: number;
  callOperandsReward: number;
  toolCallReward: number;
  formatPenalty: number;
}

export function calculatorRubric(options: CalculatorRewardWeights): Rubric<CalculatorStep> {
  return rubric(
    [
      answerSolved<CalculatorEpisode>(),
      firstWellFormedCall<CalculatorEpisode>(),
      callOperands,
      toolCall,
      invalidTurn<CalculatorEpisode>(),
    ],
    {
      call_format: options.callFormatReward,
      call_operands: options.callOperandsReward,
      tool_call: options.toolCallReward,
      invalid_action: -options.formatPenalty,
    },
  );
}
