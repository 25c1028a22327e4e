/**
 * Turn bookkeeping shared by the grid puzzles (FrozenLake, Sokoban): a step budget counted in
 * moves, an invalid turn using one step, and the grid text plus an `invalid: <reason>` line as the
 * observation. The reward is the env's rubric (an invalid turn pays a move's step cost and the
 * format penalty: the env's rewards.ts).
 */
import { z } from 'zod';
import type { Observation } from '../core/types.ts';
import type { UnscoredStep } from './step-reward.ts';

/** Option fields every grid puzzle has (spread into its options schema). */
export const gridTurnOptionsShape = {
  /** Moves allowed in one answer, separated by `||`. */
  maxActionsPerTurn: z.number().int().positive().default(1),
  /** Subtracted from the reward of an invalid turn (RAGEN 0.1). */
  formatPenalty: z.number().min(0).default(0),
} as const;

/** A grid puzzle's task: the initial map in RAGEN symbols, one string per row. */
export interface GridTask {
  map: string[];
}

/** A grid puzzle's `observation.data`: the current map (RAGEN symbols) and the steps left. */
export interface GridData {
  map: string[];
  stepsLeft: number;
}

export interface GridEpisode {
  stepsUsed: number;
  ended: boolean;
}

/**
 * The result of a turn whose action did not parse, before its reward: one step used (it costs
 * what a move costs: an invalid turn must never score better than a move, or RL learns to emit
 * garbage to dodge the step cost), maybe the end.
 */
export function invalidGridTurn(
  episode: GridEpisode,
  reason: string,
  maxSteps: number,
  observe: (reason: string) => Observation,
): UnscoredStep {
  episode.stepsUsed++;
  const truncated = episode.stepsUsed >= maxSteps;
  episode.ended = truncated;
  return {
    observation: observe(reason),
    done: false,
    truncated,
    info: { invalidAction: true, reason, ...(truncated ? { success: false } : {}) },
  };
}

/** The observation text: the grid rows, and the reason when the last turn was invalid. */
export function gridText(rows: readonly string[], invalidReason?: string): string {
  return rows.join('\n') + (invalidReason === undefined ? '' : `\ninvalid: ${invalidReason}`);
}
