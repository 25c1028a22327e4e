/**
 * Memory-recall expert: with memory tools it saves every fact, answers "ok" to distractors, and
 * at the question searches memory for the locker and answers the code it finds. Without tools it
 * cannot remember (it answers 0000 — the baseline's ceiling is chance). A random turn answers "ok".
 */
import { InvalidArgumentError, type Observation } from '../../core/index.ts';
import { formatAnswer, formatToolCall } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import type { MemoryRecallData } from './env.ts';

export function memoryRecallExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const data = memoryData(observation);
      if (data.kind === 'fact') return data.memoryTools ? formatToolCall({ name: 'memory_insert', arguments: { text: data.message.replace(/^Remember: /, '') } }) : formatAnswer('ok');
      if (data.kind === 'filler') return formatAnswer('ok');
      if (!data.memoryTools) return formatAnswer('0000');
      const found = new RegExp(`locker ${data.locker} is (\\d+)`).exec(data.lastToolResult ?? '');
      return found === null ? formatToolCall({ name: 'memory_search', arguments: { query: `code of locker ${data.locker}` } }) : formatAnswer(found[1]!);
    },
    () => formatAnswer('ok'),
  );
}

function memoryData(observation: Observation): MemoryRecallData {
  const data = observation.data as MemoryRecallData | undefined;
  if (data === undefined || typeof data.kind !== 'string') throw new InvalidArgumentError('memory-recall expert: observation.data is missing');
  return data;
}
