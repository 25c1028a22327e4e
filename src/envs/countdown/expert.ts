/**
 * Countdown expert: answers the equation `solveCountdown` finds. A random turn answers a random
 * chain of the numbers in given order with random operators (readable, rarely right).
 */
import { formatAnswer } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import { requireData } from '../require-data.ts';
import { solveCountdown } from './countdown.ts';
import type { CountdownData } from './env.ts';

export function countdownExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const task = requireData<CountdownData>(observation, 'countdown', 'numbers');
      return formatAnswer(solveCountdown(task) ?? task.numbers.join(' + '), `reach ${task.target}`);
    },
    (observation, rng) => {
      const { numbers } = requireData<CountdownData>(observation, 'countdown', 'numbers');
      return formatAnswer(numbers.map((n, i) => (i === 0 ? String(n) : ` ${rng.pick(['+', '-', '*'])} ${n}`)).join(''));
    },
  );
}
