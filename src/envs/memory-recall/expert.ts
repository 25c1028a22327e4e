/**
 * Memory-recall expert: with memory tools it saves every fact as a short note ("locker 29: 7821"),
 * answers "ok" to distractors, and at the question searches memory for the locker ("locker 29")
 * and answers the code it finds. Short notes keep the replies a small model imitates short (the
 * whole sentence made a ~100-byte tool call, and every digit in it is a copy the model must
 * learn). Without tools it cannot remember: it guesses a code of the right length, uniformly — the
 * best a memoryless policy can do (chance), so the no-memory baseline starts at its ceiling. A random
 * turn answers "ok".
 */
import { InvalidArgumentError, type Observation } from '../../core/index.ts';
import { formatAnswer, formatToolCall } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import { randomCode, type MemoryRecallData } from './env.ts';

export function memoryRecallExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation, rng) => {
      const data = memoryData(observation);
      if (data.kind === 'fact') {
        if (!data.memoryTools) return formatAnswer('ok');
        const [, locker, code] = /locker (\d+) is (\d+)/.exec(data.message) ?? [];
        return formatToolCall({ name: 'memory_insert', arguments: { text: `locker ${locker}: ${code}` } });
      }
      if (data.kind === 'filler') return formatAnswer('ok');
      if (!data.memoryTools) return formatAnswer(randomCode(rng, data.codeDigits));
      const code = new RegExp(`locker ${data.locker}: (\\d+)`).exec(data.lastToolResult ?? '')?.[1];
      return code === undefined
        ? formatToolCall({ name: 'memory_search', arguments: { query: `locker ${data.locker}` } })
        : formatAnswer(code);
    },
    () => formatAnswer('ok'),
  );
}

function memoryData(observation: Observation): MemoryRecallData {
  const data = observation.data as MemoryRecallData | undefined;
  if (data === undefined || typeof data.kind !== 'string')
    throw new InvalidArgumentError('memory-recall expert: observation.data is missing');
  return data;
}
