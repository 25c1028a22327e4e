/**
 * FrozenLake expert: the first move of a BFS shortest path from the player to the goal on the
 * current map (recomputed each turn, so it also recovers after a slip). Random turns pick any move.
 */
import { InvalidArgumentError, type Observation } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import { formatAnswer } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import type { FrozenLakeData } from './env.ts';
import { lakeMoves, parseLakeMap, shortestLakePath } from './grid.ts';

export function frozenLakeExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const { cells, player } = parseLakeMap(lakeData(observation).map);
      const path = shortestLakePath(cells, player);
      return formatAnswer(at(lakeMoves, path?.[0] ?? 0, 'lake moves'));
    },
    (_observation, rng) => formatAnswer(rng.pick(lakeMoves)),
  );
}

function lakeData(observation: Observation): FrozenLakeData {
  const data = observation.data as Partial<FrozenLakeData> | undefined;
  if (!Array.isArray(data?.map))
    throw new InvalidArgumentError('frozen-lake expert needs observation.data.map from the frozen-lake env');
  return data as FrozenLakeData;
}
