/**
 * Calculator expert: calls the tool with the whole expression, then answers the tool's result.
 * A random turn answers a random integer in [-100, 100] instead of calling the tool; once the tool
 * has answered, the expert always copies its result (random answers there would only teach a
 * small model that the result is noise, and it then never learns to copy it).
 */
import { InvalidArgumentError, type Observation } from '../../core/index.ts';
import { formatAnswer, formatToolCall } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import type { CalculatorData } from './env.ts';

export function calculatorExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) =>
      copyToolResult(observation) ??
      formatToolCall({ name: 'calculator', arguments: { expression: calculatorData(observation).expression } }),
    (observation, rng) => copyToolResult(observation) ?? formatAnswer(String(rng.range(-100, 100))),
  );
}

/** The answer that copies the tool's integer result, or null before the tool has answered. */
function copyToolResult(observation: Observation): string | null {
  const { lastToolResult } = calculatorData(observation);
  return lastToolResult !== null && /^-?\d+$/.test(lastToolResult) ? formatAnswer(lastToolResult) : null;
}

function calculatorData(observation: Observation): CalculatorData {
  const data = observation.data as Partial<CalculatorData> | undefined;
  if (typeof data?.expression !== 'string')
    throw new InvalidArgumentError('calculator expert needs observation.data.expression from the calculator env');
  return data as CalculatorData;
}
