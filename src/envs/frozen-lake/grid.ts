/**
 * FrozenLake grids in RAGEN's text symbols, their parser, renderer and BFS shortest path.
 *
 *   P player   _ frozen   O hole   G goal   X player in a hole   √ player on the goal
 *
 * A map (a task, or the `data.map` of an observation) is the rendering itself: one string per row.
 */
import { InvalidArgumentError } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';

export type LakeCell = 'frozen' | 'hole' | 'goal';
export type Position = readonly [row: number, col: number];

/** RAGEN order: 1 Left, 2 Down, 3 Right, 4 Up. */
export const lakeMoves = ['Left', 'Down', 'Right', 'Up'] as const;
const deltas: readonly Position[] = [
  [0, -1],
  [1, 0],
  [0, 1],
  [-1, 0],
];

export interface LakeGrid {
  cells: LakeCell[][]; // [row][col]
  player: Position;
}

const symbolCell: Record<string, LakeCell> = { P: 'frozen', _: 'frozen', O: 'hole', G: 'goal', X: 'hole', '√': 'goal' };
const allowedSymbols = 'P _ O G X √';

export function parseLakeMap(rows: readonly string[]): LakeGrid {
  const cells: LakeCell[][] = [];
  const players: Position[] = [];
  let goals = 0;
  rows.forEach((row, r) => {
    const symbols = Array.from(row);
    if (symbols.length !== Array.from(rows[0] ?? '').length)
      throw new InvalidArgumentError('frozen-lake map rows differ in length', { rows });
    cells.push(
      symbols.map((symbol, c) => {
        const cell = symbolCell[symbol];
        if (cell === undefined)
          throw new InvalidArgumentError(`frozen-lake map symbol "${symbol}"; allowed: ${allowedSymbols}`, { rows });
        if (symbol === 'P' || symbol === 'X' || symbol === '√') players.push([r, c]);
        if (cell === 'goal') goals++;
        return cell;
      }),
    );
  });
  if (lakeWidth(cells) === 0) throw new InvalidArgumentError('frozen-lake map is empty', { rows });
  const [player] = players;
  if (player === undefined || players.length !== 1 || goals !== 1) {
    throw new InvalidArgumentError('frozen-lake map needs exactly one player (P, X or √) and one goal (G or √)', {
      rows,
    });
  }
  return { cells, player };
}

/** Columns of the grid (0 when it has no rows). */
function lakeWidth(cells: readonly LakeCell[][]): number {
  return cells[0]?.length ?? 0;
}

/** The cell at `position` (checked). */
export function lakeCell(cells: readonly LakeCell[][], [row, col]: Position): LakeCell {
  return at(at(cells, row, 'lake rows'), col, 'lake columns');
}

export function renderLake(cells: readonly LakeCell[][], player: Position): string[] {
  return cells.map((row, r) =>
    row
      .map((cell, c) => {
        const here = r === player[0] && c === player[1];
        if (cell === 'hole') return here ? 'X' : 'O';
        if (cell === 'goal') return here ? '√' : 'G';
        return here ? 'P' : '_';
      })
      .join(''),
  );
}

/** The cell one move away; moving off the grid stays in place (gym FrozenLake). */
export function moveOnLake(cells: readonly LakeCell[][], from: Position, move: number): Position {
  const [dr, dc] = at(deltas, move, 'lake moves');
  const row = from[0] + dr;
  const col = from[1] + dc;
  if (row < 0 || col < 0 || row >= cells.length || col >= lakeWidth(cells)) return from;
  return [row, col];
}

/** Shortest list of moves (indices into `lakeMoves`) from `from` to the goal avoiding holes; null if none. */
export function shortestLakePath(cells: readonly LakeCell[][], from: Position): number[] | null {
  const width = lakeWidth(cells);
  const key = (p: Position): number => p[0] * width + p[1];
  const previous = new Map<number, { from: Position; move: number } | null>([[key(from), null]]);
  const queue: Position[] = [from];
  for (let head = 0; head < queue.length; head++) {
    const here = at(queue, head, 'search queue');
    const cell = lakeCell(cells, here);
    if (cell === 'goal') {
      const path: number[] = [];
      for (let step = previous.get(key(here)); step; step = previous.get(key(step.from))) path.unshift(step.move);
      return path;
    }
    if (cell === 'hole') continue;
    for (let move = 0; move < lakeMoves.length; move++) {
      const next = moveOnLake(cells, here, move);
      if (previous.has(key(next))) continue;
      previous.set(key(next), { from: here, move });
      queue.push(next);
    }
  }
  return null;
}
