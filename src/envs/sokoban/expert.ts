/**
 * Sokoban expert: the first move of a BFS-optimal solution of the current map (recomputed each
 * turn). When the map has become unsolvable (a box in a corner after random moves) it plays a
 * random move: a fixed fallback (it was Up) fills the failed demonstrations' remaining turns with
 * one label and teaches the imitating model that move as a bias (measured: greedy play stuck on it).
 */
import { InvalidArgumentError, type Observation } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import { formatAnswer } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import type { SokobanData } from './env.ts';
import { parseSokobanMap, sokobanMoves } from './grid.ts';
import { solveSokoban } from './solver.ts';

export function sokobanExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation, rng) => {
      const { room, position } = parseSokobanMap(sokobanData(observation).map);
      const first = solveSokoban(room, position)?.[0];
      return formatAnswer(first === undefined ? rng.pick(sokobanMoves) : at(sokobanMoves, first, 'sokoban moves'));
    },
    (_observation, rng) => formatAnswer(rng.pick(sokobanMoves)),
  );
}

function sokobanData(observation: Observation): SokobanData {
  const data = observation.data as Partial<SokobanData> | undefined;
  if (!Array.isArray(data?.map))
    throw new InvalidArgumentError('sokoban expert needs observation.data.map from the sokoban env');
  return data as SokobanData;
}
