/**
 * FrozenLake (RAGEN text version): walk the player P to the goal G without falling into a hole.
 * Reward 1 on reaching the goal, 0 otherwise (minus `formatPenalty` for an invalid turn; rewards.ts).
 * Every move, and every invalid turn, uses one of `maxSteps`; the episode is truncated when they
 * run out. Slippery (RAGEN): a move goes where intended with probability `slipperySuccessRate`,
 * otherwise to one of the two perpendicular directions. Default non-slippery, so a small model
 * can learn it; RAGEN's setting is `{ slippery: true }`.
 */
import { z } from 'zod';
import { Rng, type Action, type Env, type Observation, type StepResult } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import { parseMoveAction } from '../action-format.ts';
import { runningEpisode } from '../episode-turns.ts';
import { parseOptions } from '../options.ts';
import { generateLakeMap } from './generator.ts';
import { lakeCell, lakeMoves, moveOnLake, parseLakeMap, renderLake, type LakeCell, type Position } from './grid.ts';
import { gridText, gridTurnOptionsShape, invalidGridTurn, type GridData, type GridTask } from '../grid-turn.ts';
import { scoreStep } from '../step-reward.ts';
import type { Rubric } from '../../rewards/rubric.ts';
import { frozenLakeRubric, type FrozenLakeStep } from './rewards.ts';

export const frozenLakeOptionsSchema = z.strictObject({
  /** Side of the square generated map. */
  size: z.number().int().min(2).max(16).default(4),
  /** Probability that a generated cell is a hole. */
  holeProbability: z.number().min(0).max(0.6).default(0.2),
  /** Moves may slip sideways (RAGEN uses true). */
  slippery: z.boolean().default(false),
  /** When slippery: probability that a move goes where intended (RAGEN 0.8). */
  slipperySuccessRate: z.number().min(0).max(1).default(0.8),
  /** Moves (and invalid turns) per episode; generated maps are solvable within it. */
  maxSteps: z.number().int().positive().default(10),
  ...gridTurnOptionsShape,
});
export type FrozenLakeOptions = z.input<typeof frozenLakeOptionsSchema>;

/** A task is the initial map in RAGEN symbols, one string per row. */
export type FrozenLakeTask = GridTask;

/** `observation.data`: the current map (RAGEN symbols) and the steps left. */
export type FrozenLakeData = GridData;

interface Episode {
  cells: LakeCell[][];
  player: Position;
  stepsUsed: number;
  ended: boolean;
  dynamics: Rng;
}

export class FrozenLakeEnv implements Env<FrozenLakeTask> {
  readonly name = 'frozen-lake';
  readonly instructions: string;
  private readonly options: z.output<typeof frozenLakeOptionsSchema>;
  private episode: Episode | null = null;
  readonly rewardComponents: Rubric<FrozenLakeStep>;

  constructor(options: FrozenLakeOptions = {}) {
    this.options = parseOptions(frozenLakeOptionsSchema, options, 'frozen-lake');
    this.rewardComponents = frozenLakeRubric(this.options);
    const { slippery, maxActionsPerTurn } = this.options;
    const parts = [
      'FrozenLake: move P to the goal G. _ is ice, O is a hole (you lose), X: you fell in, √: you reached G.',
    ];
    if (slippery) parts.push('The ice is slippery: a move may go sideways.');
    parts.push(`Moves: ${lakeMoves.join(', ')}.`);
    parts.push(
      maxActionsPerTurn > 1
        ? `Reply <think>...</think><answer>Right || Up</answer> (at most ${maxActionsPerTurn} moves).`
        : 'Reply <think>...</think><answer>Right</answer>.',
    );
    this.instructions = parts.join(' ');
  }

  async reset({ seed, task }: { seed: number; task?: FrozenLakeTask }): Promise<Observation> {
    const rng = new Rng(seed);
    const taskRng = rng.fork();
    const map = task?.map ?? generateLakeMap(taskRng, { ...this.options, maxPathLength: this.options.maxSteps });
    const { cells, player } = parseLakeMap(map);
    this.episode = { cells, player, stepsUsed: 0, ended: false, dynamics: rng.fork() };
    return this.observe(this.episode);
  }

  async step(action: Action): Promise<StepResult> {
    const episode = runningEpisode(this.name, this.episode);
    const { maxSteps, maxActionsPerTurn } = this.options;

    const parsed = parseMoveAction(action, { moves: lakeMoves, maxActionsPerTurn });
    if (parsed.kind === 'invalid') {
      const step = invalidGridTurn(episode, parsed.reason, maxSteps, (reason) => this.observe(episode, reason));
      return scoreStep(this.name, this.rewardComponents, { invalid: true, reachedGoal: false }, step);
    }

    let done = false;
    let reachedGoal = false;
    const taken: string[] = [];
    for (const intended of parsed.moves) {
      if (done || episode.stepsUsed >= maxSteps) break;
      const move = this.slip(episode, intended);
      taken.push(at(lakeMoves, move, 'lake moves'));
      episode.player = moveOnLake(episode.cells, episode.player, move);
      episode.stepsUsed++;
      const cell = lakeCell(episode.cells, episode.player);
      reachedGoal = cell === 'goal';
      done = cell !== 'frozen';
    }
    const truncated = !done && episode.stepsUsed >= maxSteps;
    episode.ended = done || truncated;
    return scoreStep(
      this.name,
      this.rewardComponents,
      { invalid: false, reachedGoal },
      {
        observation: this.observe(episode),
        done,
        truncated,
        info: { invalidAction: false, moves: taken, ...(episode.ended ? { success: reachedGoal } : {}) },
      },
    );
  }

  private slip(episode: Episode, intended: number): number {
    const { slippery, slipperySuccessRate } = this.options;
    if (!slippery || episode.dynamics.next() < slipperySuccessRate) return intended;
    return episode.dynamics.next() < 0.5 ? (intended + 1) % 4 : (intended + 3) % 4;
  }

  private observe(episode: Episode, invalidReason?: string): Observation {
    const map = renderLake(episode.cells, episode.player);
    const data: FrozenLakeData = { map, stepsLeft: this.options.maxSteps - episode.stepsUsed };
    return { text: gridText(map, invalidReason), data };
  }
}

export function makeFrozenLake(options: FrozenLakeOptions = {}): FrozenLakeEnv {
  return new FrozenLakeEnv(options);
}
