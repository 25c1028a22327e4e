/**
 * Sokoban (RAGEN text version): push every box X onto a target O.
 * Reward per move, as gym-sokoban / RAGEN (named components: rewards.ts): −0.1 for the move, +1 for
 * a box pushed onto a target, −1 for a box pushed off one, +10 when all boxes are on targets
 * (success = solved). A wall bump is a move (−0.1). An invalid turn costs a move's −0.1 plus
 * −formatPenalty and uses one of `maxSteps`;
 * the episode is truncated when they run out. Generated puzzles are solvable within `maxSteps`.
 */
import { z } from 'zod';
import { Rng, type Action, type Env, type Observation, type StepResult } from '../../core/index.ts';
import { parseMoveAction } from '../action-format.ts';
import { runningEpisode } from '../episode-turns.ts';
import { parseOptions } from '../options.ts';
import { generateSokobanMap } from './generator.ts';
import {
  applySokobanMove,
  isSolved,
  parseSokobanMap,
  renderSokoban,
  sokobanMoves,
  type SokobanPosition,
  type SokobanRoom,
} from './grid.ts';
import { gridText, gridTurnOptionsShape, invalidGridTurn, type GridData, type GridTask } from '../grid-turn.ts';
import { scoreStep } from '../step-reward.ts';
import type { Rubric } from '../../rewards/rubric.ts';
import { sokobanRubric, type SokobanStep } from './rewards.ts';

export { sokobanRewards } from './rewards.ts';

export const sokobanOptionsSchema = z.strictObject({
  /** Room width, wall border included. */
  width: z.number().int().min(4).max(12).default(6),
  /** Room height, wall border included. */
  height: z.number().int().min(4).max(12).default(6),
  /** Boxes (and targets). */
  numBoxes: z.number().int().min(1).max(3).default(1),
  /** Fraction of the interior that is floor (small rooms: below 1). */
  floorFraction: z.number().min(0.3).max(1).default(0.75),
  /** Moves (and invalid turns) per episode (RAGEN 10); puzzles are generated solvable within it. */
  maxSteps: z.number().int().positive().max(50).default(10),
  ...gridTurnOptionsShape,
});
export type SokobanOptions = z.input<typeof sokobanOptionsSchema>;

/** A task is the initial map in RAGEN symbols, one string per row. */
export type SokobanTask = GridTask;

/** `observation.data`: the current map (RAGEN symbols) and the steps left. */
export type SokobanData = GridData;

interface Episode {
  room: SokobanRoom;
  position: SokobanPosition;
  stepsUsed: number;
  ended: boolean;
}

export class SokobanEnv implements Env<SokobanTask> {
  readonly name = 'sokoban';
  readonly instructions: string;
  private readonly options: z.output<typeof sokobanOptionsSchema>;
  private episode: Episode | null = null;
  readonly rewardComponents: Rubric<SokobanStep>;

  constructor(options: SokobanOptions = {}) {
    this.options = parseOptions(sokobanOptionsSchema, options, 'sokoban');
    this.rewardComponents = sokobanRubric(this.options);
    const { maxActionsPerTurn } = this.options;
    this.instructions = [
      'Sokoban: push every box X onto a target O. # wall, _ floor, P you, S you on a target, √ box on a target.',
      `Moves: ${sokobanMoves.join(', ')}. Boxes can be pushed, not pulled.`,
      maxActionsPerTurn > 1
        ? `Reply <think>...</think><answer>Up || Left</answer> (at most ${maxActionsPerTurn} moves).`
        : 'Reply <think>...</think><answer>Up</answer>.',
    ].join(' ');
  }

  async reset({ seed, task }: { seed: number; task?: SokobanTask }): Promise<Observation> {
    const { maxSteps } = this.options;
    const map =
      task?.map ??
      generateSokobanMap(new Rng(seed), {
        ...this.options,
        maxReverseMoves: 2 * maxSteps,
        maxSolutionLength: maxSteps,
      });
    const { room, position } = parseSokobanMap(map);
    this.episode = { room, position, stepsUsed: 0, ended: false };
    return this.observe(this.episode);
  }

  async step(action: Action): Promise<StepResult> {
    const episode = runningEpisode(this.name, this.episode);
    const { maxSteps, maxActionsPerTurn } = this.options;

    const parsed = parseMoveAction(action, { moves: sokobanMoves, maxActionsPerTurn });
    if (parsed.kind === 'invalid') {
      const step = invalidGridTurn(episode, parsed.reason, maxSteps, (reason) => this.observe(episode, reason));
      const turn: SokobanStep = { invalid: true, steps: 1, boxesOnTarget: 0, boxesOffTarget: 0, solved: false };
      return scoreStep(this.name, this.rewardComponents, turn, step);
    }

    const turn: SokobanStep = { invalid: false, steps: 0, boxesOnTarget: 0, boxesOffTarget: 0, solved: false };
    for (const move of parsed.moves) {
      if (turn.solved || episode.stepsUsed >= maxSteps) break;
      const { position, pushed } = applySokobanMove(episode.room, episode.position, move);
      episode.position = position;
      episode.stepsUsed++;
      turn.steps++;
      if (pushed !== undefined) {
        const { targets } = episode.room;
        if (targets[pushed.to] && !targets[pushed.from]) turn.boxesOnTarget++;
        if (!targets[pushed.to] && targets[pushed.from]) turn.boxesOffTarget++;
      }
      turn.solved = isSolved(episode.room, position);
    }
    const done = turn.solved;
    const truncated = !done && episode.stepsUsed >= maxSteps;
    episode.ended = done || truncated;
    const info = { invalidAction: false, ...(episode.ended ? { success: done } : {}) };
    return scoreStep(this.name, this.rewardComponents, turn, {
      observation: this.observe(episode),
      done,
      truncated,
      info,
    });
  }

  private observe(episode: Episode, invalidReason?: string): Observation {
    const map = renderSokoban(episode.room, episode.position);
    const data: SokobanData = { map, stepsLeft: this.options.maxSteps - episode.stepsUsed };
    return { text: gridText(map, invalidReason), data };
  }
}

export function makeSokoban(options: SokobanOptions = {}): SokobanEnv {
  return new SokobanEnv(options);
}
