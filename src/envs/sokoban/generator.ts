/**
 * Sokoban puzzles that are solvable by construction (reverse play, as in gym-sokoban / RAGEN):
 * 1. carve a small room: a random walk inside the wall border opens `floorFraction` of it;
 * 2. put the boxes on random targets (the solved state) and the player on another floor cell;
 * 3. play backwards `maxReverseMoves` moves: walk, or pull a box (player steps away from a box
 *    next to it and drags it along) — every pull undone forward is a legal push;
 * 4. of the states met on the way, keep the one whose BFS-optimal solution is longest, among
 *    those solvable in 1…`maxSolutionLength` moves (gym-sokoban likewise scores the states of
 *    its reverse play and keeps the best). The BFS check is what guarantees the step budget.
 */
import type { Rng } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import { TaskGenerationError } from '../errors.ts';
import { isFree, neighbour, renderSokoban, sokobanMoves, type SokobanPosition, type SokobanRoom } from './grid.ts';
import { solveSokoban } from './solver.ts';

export interface SokobanGeneratorOptions {
  width: number;
  height: number;
  numBoxes: number;
  /** Fraction of the interior (inside the border) that is floor. */
  floorFraction: number;
  maxReverseMoves: number;
  maxSolutionLength: number;
}

export function generateSokobanMap(rng: Rng, options: SokobanGeneratorOptions): string[] {
  const attempts = 1000;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const room = carveRoom(rng, options);
    const floor = room.walls.flatMap((wall, cell) => (wall ? [] : [cell]));
    if (floor.length < 2 * options.numBoxes + 2) continue;
    rng.shuffle(floor);
    const targets = floor.slice(0, options.numBoxes);
    for (const cell of targets) room.targets[cell] = true;
    let position: SokobanPosition = {
      player: at(floor, options.numBoxes, 'floor cells'),
      boxes: [...targets].sort((a, b) => a - b),
    };
    let best: { position: SokobanPosition; length: number } | null = null;
    for (let move = 0; move < options.maxReverseMoves; move++) {
      position = reverseStep(rng, room, position);
      const length = solveSokoban(room, position, options.maxSolutionLength)?.length ?? 0;
      if (length >= 1 && length >= (best?.length ?? 0)) best = { position, length };
    }
    if (best !== null) return renderSokoban(room, best.position);
  }
  throw new TaskGenerationError('sokoban', attempts, options);
}

function carveRoom(rng: Rng, options: SokobanGeneratorOptions): SokobanRoom {
  const { width, height, floorFraction } = options;
  const room: SokobanRoom = {
    width,
    height,
    walls: Array(width * height).fill(true),
    targets: Array(width * height).fill(false),
  };
  const inside = (cell: number): boolean => {
    const row = Math.floor(cell / width);
    const col = cell % width;
    return row > 0 && col > 0 && row < height - 1 && col < width - 1;
  };
  const wanted = Math.max(3, Math.round((width - 2) * (height - 2) * floorFraction));
  let cell = rng.range(1, height - 2) * width + rng.range(1, width - 2);
  room.walls[cell] = false;
  let open = 1;
  for (let step = 0; open < wanted && step < 100 * wanted; step++) {
    const next = neighbour(room, cell, rng.int(sokobanMoves.length));
    if (!inside(next)) continue;
    cell = next;
    if (room.walls[cell]) open++;
    room.walls[cell] = false;
  }
  return room;
}

/** One backwards move: pull a box if possible (preferred 3 times in 4), else walk. */
function reverseStep(rng: Rng, room: SokobanRoom, position: SokobanPosition): SokobanPosition {
  const pulls: SokobanPosition[] = [];
  const walks: SokobanPosition[] = [];
  for (let move = 0; move < sokobanMoves.length; move++) {
    const to = neighbour(room, position.player, move);
    if (!isFree(room, position, to)) continue;
    walks.push({ player: to, boxes: position.boxes });
    const behind = neighbour(room, position.player, opposite(move));
    if (behind >= 0 && position.boxes.includes(behind)) {
      const boxes = position.boxes.map((box) => (box === behind ? position.player : box)).sort((a, b) => a - b);
      pulls.push({ player: to, boxes });
    }
  }
  if (pulls.length > 0 && rng.next() < 0.75) return rng.pick(pulls);
  return walks.length > 0 ? rng.pick(walks) : position;
}

function opposite(move: number): number {
  return move ^ 1; // Up<->Down, Left<->Right
}
