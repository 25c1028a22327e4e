/**
 * Breadth-first Sokoban solver over (player, boxes) states: returns a shortest move list
 * (indices into `sokobanMoves`), or null when no solution within `maxDepth` moves exists.
 */
import { applySokobanMove, isSolved, sokobanMoves, type SokobanPosition, type SokobanRoom } from './grid.ts';

export function solveSokoban(
  room: SokobanRoom,
  start: SokobanPosition,
  maxDepth = Number.POSITIVE_INFINITY,
): number[] | null {
  const key = (position: SokobanPosition): string => `${position.player}:${position.boxes.join(',')}`;
  const previous = new Map<string, { from: string; move: number } | null>([[key(start), null]]);
  let frontier: SokobanPosition[] = [start];
  for (let depth = 0; frontier.length > 0; depth++) {
    const next: SokobanPosition[] = [];
    for (const position of frontier) {
      if (isSolved(room, position)) {
        const path: number[] = [];
        for (let step = previous.get(key(position)); step; step = previous.get(step.from)) path.unshift(step.move);
        return path;
      }
      if (depth >= maxDepth) continue;
      for (let move = 0; move < sokobanMoves.length; move++) {
        const moved = applySokobanMove(room, position, move).position;
        const movedKey = key(moved);
        if (previous.has(movedKey)) continue;
        previous.set(movedKey, { from: key(position), move });
        next.push(moved);
      }
    }
    frontier = next;
  }
  return null;
}
