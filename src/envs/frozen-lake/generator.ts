/**
 * Random solvable FrozenLake maps: each cell is a hole with `holeProbability`, start and goal are
 * two distinct random non-hole cells, and the map is kept only if BFS finds a path no longer than
 * `maxPathLength` (so the non-slippery expert finishes within the step limit).
 */
import type { Rng } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import { TaskGenerationError } from '../errors.ts';
import { renderLake, shortestLakePath, type LakeCell, type Position } from './grid.ts';

export interface LakeGeneratorOptions {
  size: number;
  holeProbability: number;
  maxPathLength: number;
}

export function generateLakeMap(rng: Rng, options: LakeGeneratorOptions): string[] {
  const { size, holeProbability, maxPathLength } = options;
  const attempts = 1000;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const cells: LakeCell[][] = Array.from({ length: size }, () =>
      Array.from({ length: size }, (): LakeCell => (rng.next() < holeProbability ? 'hole' : 'frozen')),
    );
    const start: Position = [rng.int(size), rng.int(size)];
    const goal: Position = [rng.int(size), rng.int(size)];
    if (start[0] === goal[0] && start[1] === goal[1]) continue;
    at(cells, start[0], 'lake rows')[start[1]] = 'frozen';
    at(cells, goal[0], 'lake rows')[goal[1]] = 'goal';
    const path = shortestLakePath(cells, start);
    if (path !== null && path.length <= maxPathLength) return renderLake(cells, start);
  }
  throw new TaskGenerationError('frozen-lake', attempts, options);
}
