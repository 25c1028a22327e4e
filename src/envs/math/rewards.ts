/**
 * Math's step reward as named components (issue 31):
 *   R = solved + formatReward · format − formatPenalty · invalid_action
 * `solved` (outcome): the answer has the right value (answer-check.ts); `format` (format, R1-style):
 * 1 when the answer came with a non-empty `<think>` block, right or wrong; `invalid_action` (penalty).
 */
import { reward } from '../../rewards/reward.ts';
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import type { ToolTaskStep } from '../tool-task.ts';
import { answerSolved, invalidTurn } from '../tool-task-rewards.ts';
import type { MathEpisode } from './env.ts';

type MathStep = ToolTaskStep<MathEpisode>;

const thought = reward<MathStep>(
  'format',
  ({ turn }) => (turn.kind === 'answer' && turn.thinking !== null && turn.thinking !== '' ? 1 : 0),
  { kind: 'format' },
);

export function mathRubric(options: { formatReward: number; formatPenalty: number }): Rubric<MathStep> {
  return rubric([answerSolved<MathEpisode>(), thought, invalidTurn<MathEpisode>()], {
    format: options.formatReward,
    invalid_action: -options.formatPenalty,
  });
}
