/**
 * Code expert: answers the task's reference solution. A random turn answers a function of the
 * right name that returns one of a few constants (it passes a test only by chance).
 */
import { formatAnswer } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import { requireData, requirePrivileged } from '../require-data.ts';
import type { CodeData, CodePrivileged } from './env.ts';

export function codeExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => formatAnswer(requirePrivileged<CodePrivileged>(observation, 'code', 'solution').solution),
    (observation, rng) => {
      const { signature } = requireData<CodeData>(observation, 'code', 'task').task;
      return formatAnswer(
        `function ${signature} { return ${rng.pick(['0', '1', 'true', 'false', 'null', "''", '[]'])}; }`,
      );
    },
  );
}
