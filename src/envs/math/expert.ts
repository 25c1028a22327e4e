/**
 * Math expert: calls the calculator with the problem's solution expression, then answers the
 * result in a randomly chosen but equivalent form (decimal, fraction, with its unit, with
 * thousands separators, `x = …`) — exercising the checker's tolerance. A random turn answers a
 * random integer in [-100, 100].
 */
import type { Observation, Rng } from '../../core/index.ts';
import { formatAnswer, formatToolCall } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import type { MathData, MathPrivileged } from './env.ts';
import { formatRational, type Rational } from './rational.ts';
import { requireData, requirePrivileged } from '../require-data.ts';

export function mathExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation, rng) => {
      const { problem, lastToolResult } = requireData<MathData>(observation, 'math', 'problem');
      const { solution, answer, unit } = requirePrivileged<MathPrivileged>(observation, 'math', 'solution');
      if (lastToolResult === formatRational(answer))
        return formatAnswer(answerForm(answer, unit, problem.kind === 'linear', rng), 'calculator result');
      return formatToolCall({ name: 'calculator', arguments: { expression: solution } });
    },
    (_observation: Observation, rng) => formatAnswer(String(rng.range(-100, 100))),
  );
}

function answerForm(value: Rational, unit: string, equation: boolean, rng: Rng): string {
  let text = formatRational(value);
  const decimal = value.numerator / value.denominator;
  if (value.denominator !== 1 && rng.next() < 0.5)
    text = Number.isInteger(decimal * 10000) ? String(decimal) : decimal.toFixed(3);
  if (value.denominator === 1 && Math.abs(value.numerator) >= 1000 && rng.next() < 0.5)
    text = value.numerator.toLocaleString('en-US');
  if (unit !== '' && rng.next() < 0.5) text = `${text} ${unit}`;
  if (equation && rng.next() < 0.5) text = `x = ${text}`;
  return text;
}
