/**
 * Calculator expert: calls the tool with the whole expression, then answers the tool's result.
 * A random turn answers a random integer in [-100, 100].
 */
import { InvalidArgumentError, type Observation } from '../../core/index.ts';
import { formatAnswer, formatToolCall } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import type { CalculatorData } from './env.ts';

export function calculatorExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const { expression, lastToolResult } = calculatorData(observation);
      if (lastToolResult !== null && /^-?\d+$/.test(lastToolResult)) return formatAnswer(lastToolResult);
      return formatToolCall({ name: 'calculator', arguments: { expression } });
    },
    (_observation, rng) => formatAnswer(String(rng.range(-100, 100))),
  );
}

function calculatorData(observation: Observation): CalculatorData {
  const data = observation.data as Partial<CalculatorData> | undefined;
  if (typeof data?.expression !== 'string') throw new InvalidArgumentError('calculator expert needs observation.data.expression from the calculator env');
  return data as CalculatorData;
}
