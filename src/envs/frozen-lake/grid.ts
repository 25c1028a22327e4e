/**
 * FrozenLake grids in RAGEN's text symbols, their parser, renderer and BFS shortest path.
 *
 *   P player   _ frozen   O hole   G goal   X player in a hole   √ player on the goal
 *
 * A map (a task, or the `data.map` of an observation) is the rendering itself: one string per row.
 */
import { InvalidArgumentError } from '../../core/index.ts';

export type LakeCell = 'frozen' | 'hole' | 'goal';
export type Position = readonly [row: number, col: number];

/** RAGEN order: 1 Left, 2 Down, 3 Right, 4 Up. */
export const lakeMoves = ['Left', 'Down', 'Right', 'Up'] as const;
const deltas: readonly Position[] = [[0, -1], [1, 0], [0, 1], [-1, 0]];

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
    if (symbols.length !== Array.from(rows[0] ?? '').length) throw new InvalidArgumentError('frozen-lake map rows differ in length', { rows });
    cells.push(
      symbols.map((symbol, c) => {
        const cell = symbolCell[symbol];
        if (cell === undefined) throw new InvalidArgumentError(`frozen-lake map symbol "${symbol}"; allowed: ${allowedSymbols}`, { rows });
        if (symbol === 'P' || symbol === 'X' || symbol === '√') players.push([r, c]);
        if (cell === 'goal') goals++;
        return cell;
      }),
    );
  });
  if (rows.length === 0 || cells[0]!.length === 0) throw new InvalidArgumentError('frozen-lake map is empty', { rows });
  if (players.length !== 1 || goals !== 1) {
    throw new InvalidArgumentError('frozen-lake map needs exactly one player (P, X or √) and one goal (G or √)', { rows });
  }
  return { cells, player: players[0]! };
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
  const [dr, dc] = deltas[move]!;
  const row = from[0] + dr;
  const col = from[1] + dc;
  if (row < 0 || col < 0 || row >= cells.length || col >= cells[0]!.length) return from;
  return [row, col];
}

/** Shortest list of moves (indices into `lakeMoves`) from `from` to the goal avoiding holes; null if none. */
export function shortestLakePath(cells: readonly LakeCell[][], from: Position): number[] | null {
  const width = cells[0]!.length;
  const key = (p: Position): number => p[0] * width + p[1];
  const previous = new Map<number, { from: Position; move: number } | null>([[key(from), null]]);
  const queue: Position[] = [from];
  for (let head = 0; head < queue.length; head++) {
    const at = queue[head]!;
    if (cells[at[0]]![at[1]] === 'goal') {
      const path: number[] = [];
      for (let step = previous.get(key(at)); step; step = previous.get(key(step.from))) path.unshift(step.move);
      return path;
    }
    if (cells[at[0]]![at[1]] === 'hole') continue;
    for (let move = 0; move < lakeMoves.length; move++) {
      const next = moveOnLake(cells, at, move);
      if (previous.has(key(next))) continue;
      previous.set(key(next), { from: at, move });
      queue.push(next);
    }
  }
  return null;
}
