/**
 * Code's step reward as named components (issue 31): R = tests_passed − formatPenalty · invalid_action.
 * `tests_passed` (outcome): the fraction of the task's unit tests the answer passed in the sandbox
 * (0 when the sandbox run failed; the run itself stays in env.ts); `invalid_action` (penalty).
 */
import { reward } from '../../rewards/reward.ts';
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import type { ToolTaskStep } from '../tool-task.ts';
import { invalidTurn } from '../tool-task-rewards.ts';
import type { CodeEpisode } from './env.ts';

type CodeStep = ToolTaskStep<CodeEpisode>;

const testsPassed = reward<CodeStep>('tests_passed', ({ episode, turn }) =>
  turn.kind === 'answer' && episode.tests !== null ? episode.tests.passed / episode.tests.total : 0,
);

export function codeRubric(options: { formatPenalty: number }): Rubric<CodeStep> {
  return rubric([testsPassed, invalidTurn<CodeEpisode>()], [1, -options.formatPenalty]);
}
