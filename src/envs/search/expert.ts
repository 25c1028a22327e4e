/**
 * Search expert: searches the title of each supporting article in turn (what a careful agent
 * would look up, hop by hop), then answers with the gold answer and cites its sources. A random
 * turn answers a random word from the question.
 */
import { formatAnswer } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import { requireData, requirePrivileged } from '../require-data.ts';
import type { SearchData, SearchPrivileged } from './env.ts';

export function searchExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const { queries } = requireData<SearchData>(observation, 'search', 'question');
      const { answer, support } = requirePrivileged<SearchPrivileged>(observation, 'search', 'answer');
      const next = support[queries.length];
      if (next !== undefined) return `<think>look up ${next}</think><search> ${next} </search>`;
      return formatAnswer(`${answer} (sources: ${support.join('; ')})`);
    },
    (observation, rng) => {
      const { question } = requireData<SearchData>(observation, 'search', 'question');
      return formatAnswer(rng.pick(question.question.replace(/\?$/, '').split(' ')));
    },
  );
}
