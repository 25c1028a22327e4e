/**
 * Countdown's step reward as named components (issue 31), TinyZero's rule:
 *   R = solved + partialReward · format − formatPenalty · invalid_action
 * `solved` (outcome): a correct equation; `format` (format: TinyZero's format score): 1 for a
 * readable equation that is wrong, the reward a model can earn without solving anything;
 * `invalid_action` (penalty).
 */
import { reward } from '../../rewards/reward.ts';
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import type { ToolTaskStep } from '../tool-task.ts';
import { answerSolved, invalidTurn } from '../tool-task-rewards.ts';
import type { CountdownEpisode } from './env.ts';

type CountdownStep = ToolTaskStep<CountdownEpisode>;

const readable = reward<CountdownStep>(
  'format',
  ({ episode, turn }) => (turn.kind === 'answer' && episode.check === 'wrong' ? 1 : 0),
  { kind: 'format' },
);

export function countdownRubric(options: { partialReward: number; formatPenalty: number }): Rubric<CountdownStep> {
  return rubric([answerSolved<CountdownEpisode>(), readable, invalidTurn<CountdownEpisode>()], {
    format: options.partialReward,
    invalid_action: -options.formatPenalty,
  });
}
