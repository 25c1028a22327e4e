/** Bandit expert: always the arm with the highest pay probability; a random turn picks any arm. */
import { InvalidArgumentError, type Observation } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import { formatAnswer } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import type { BanditData } from './env.ts';

export function banditExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const { arms, payProbabilities } = banditData(observation);
      return formatAnswer(at(arms, payProbabilities.indexOf(Math.max(...payProbabilities)), 'arms'));
    },
    (observation, rng) => formatAnswer(rng.pick(banditData(observation).arms)),
  );
}

function banditData(observation: Observation): BanditData {
  const data = observation.data as Partial<BanditData> | undefined;
  if (!Array.isArray(data?.arms) || !Array.isArray(data?.payProbabilities)) {
    throw new InvalidArgumentError(
      'bandit expert needs observation.data.arms and payProbabilities from the bandit env',
    );
  }
  return data as BanditData;
}
