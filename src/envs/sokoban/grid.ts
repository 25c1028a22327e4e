/**
 * Sokoban rooms in RAGEN's text symbols, their parser, renderer and move rule.
 *
 *   # wall   _ empty   O target   √ box on target   X box   P player   S player on target
 *
 * Cells are flat indices `row * width + col`. A map (task, or `data.map`) is the rendering itself.
 */
import { InvalidArgumentError } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';

/** RAGEN order: 1 Up, 2 Down, 3 Left, 4 Right. */
export const sokobanMoves = ['Up', 'Down', 'Left', 'Right'] as const;
const deltas: ReadonlyArray<readonly [number, number]> = [
  [-1, 0],
  [1, 0],
  [0, -1],
  [0, 1],
];

/** The fixed part of a puzzle. */
export interface SokobanRoom {
  width: number;
  height: number;
  walls: boolean[];
  targets: boolean[];
}

/** The moving part: player cell and box cells (sorted ascending). */
export interface SokobanPosition {
  player: number;
  boxes: number[];
}

const allowedSymbols = '# _ O √ X P S';

export function parseSokobanMap(rows: readonly string[]): { room: SokobanRoom; position: SokobanPosition } {
  const grid = rows.map((row) => Array.from(row));
  const height = grid.length;
  const width = grid[0]?.length ?? 0;
  if (width === 0 || grid.some((row) => row.length !== width))
    throw new InvalidArgumentError('sokoban map is empty or ragged', { rows });
  const room: SokobanRoom = { width, height, walls: [], targets: [] };
  const players: number[] = [];
  const boxes: number[] = [];
  grid.flat().forEach((symbol, cell) => {
    if (!allowedSymbols.includes(symbol) || symbol === ' ')
      throw new InvalidArgumentError(`sokoban map symbol "${symbol}"; allowed: ${allowedSymbols}`, { rows });
    room.walls.push(symbol === '#');
    room.targets.push(symbol === 'O' || symbol === '√' || symbol === 'S');
    if (symbol === 'P' || symbol === 'S') players.push(cell);
    if (symbol === 'X' || symbol === '√') boxes.push(cell);
  });
  const targets = room.targets.filter(Boolean).length;
  const [player] = players;
  if (player === undefined || players.length !== 1 || boxes.length === 0 || boxes.length !== targets) {
    throw new InvalidArgumentError(
      'sokoban map needs one player (P or S) and as many boxes (X, √) as targets (O, √, S)',
      { rows },
    );
  }
  return { room, position: { player, boxes } };
}

export function renderSokoban(room: SokobanRoom, position: SokobanPosition): string[] {
  const rows: string[] = [];
  for (let row = 0; row < room.height; row++) {
    let line = '';
    for (let col = 0; col < room.width; col++) {
      const cell = row * room.width + col;
      const target = room.targets[cell];
      if (room.walls[cell]) line += '#';
      else if (cell === position.player) line += target ? 'S' : 'P';
      else if (position.boxes.includes(cell)) line += target ? '√' : 'X';
      else line += target ? 'O' : '_';
    }
    rows.push(line);
  }
  return rows;
}

/** The cell next to `cell` in direction `move`, or -1 off the grid. */
export function neighbour(room: SokobanRoom, cell: number, move: number): number {
  const [dr, dc] = at(deltas, move, 'sokoban moves');
  const row = Math.floor(cell / room.width) + dr;
  const col = (cell % room.width) + dc;
  return row < 0 || col < 0 || row >= room.height || col >= room.width ? -1 : row * room.width + col;
}

export function isFree(room: SokobanRoom, position: SokobanPosition, cell: number): boolean {
  return cell >= 0 && !room.walls[cell] && !position.boxes.includes(cell);
}

/** One move: walk, or push one box; blocked moves leave the position unchanged. */
export function applySokobanMove(
  room: SokobanRoom,
  position: SokobanPosition,
  move: number,
): { position: SokobanPosition; pushed?: { from: number; to: number } } {
  const next = neighbour(room, position.player, move);
  if (next < 0 || room.walls[next]) return { position };
  if (!position.boxes.includes(next)) return { position: { player: next, boxes: position.boxes } };
  const beyond = neighbour(room, next, move);
  if (!isFree(room, position, beyond)) return { position };
  const boxes = position.boxes.map((box) => (box === next ? beyond : box)).sort((a, b) => a - b);
  return { position: { player: next, boxes }, pushed: { from: next, to: beyond } };
}

export function boxesOnTarget(room: SokobanRoom, position: SokobanPosition): number {
  return position.boxes.filter((box) => room.targets[box]).length;
}

export function isSolved(room: SokobanRoom, position: SokobanPosition): boolean {
  return boxesOnTarget(room, position) === position.boxes.length;
}
