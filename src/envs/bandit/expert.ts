/** Bandit expert: always the arm with the highest pay probability; a random turn picks any arm. */
import { at } from '../../core/indexing.ts';
import { formatAnswer } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import { requireData, requirePrivileged } from '../require-data.ts';
import type { BanditData, BanditPrivileged } from './env.ts';

export function banditExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const { arms } = requireData<BanditData>(observation, 'bandit', 'arms');
      const { payProbabilities } = requirePrivileged<BanditPrivileged>(observation, 'bandit', 'payProbabilities');
      return formatAnswer(at(arms, payProbabilities.indexOf(Math.max(...payProbabilities)), 'arms'));
    },
    (observation, rng) => formatAnswer(rng.pick(requireData<BanditData>(observation, 'bandit', 'arms').arms)),
  );
}
