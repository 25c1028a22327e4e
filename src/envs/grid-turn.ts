/**
 * Turn bookkeeping shared by the grid puzzles (FrozenLake, Sokoban): a step budget counted in
 * moves, an invalid turn costing one step (and a move's reward) and the format penalty, and the
 * grid text plus an `invalid: <reason>` line as the observation.
 */
import { z } from 'zod';
import type { Observation, StepResult } from '../core/types.ts';

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
 * The result of a turn whose action did not parse: one step used, its cost (`stepReward`, as a
 * move's: an invalid turn must never score better than a move, or RL learns to emit garbage to
 * dodge the step cost) and the format penalty, maybe the end.
 */
export function invalidGridTurn(
  episode: GridEpisode,
  reason: string,
  { maxSteps, formatPenalty, stepReward = 0 }: { maxSteps: number; formatPenalty: number; stepReward?: number },
  observe: (reason: string) => Observation,
): StepResult {
  episode.stepsUsed++;
  const truncated = episode.stepsUsed >= maxSteps;
  episode.ended = truncated;
  return {
    observation: observe(reason),
    reward: stepReward - formatPenalty,
    done: false,
    truncated,
    info: { invalidAction: true, reason, ...(truncated ? { success: false } : {}) },
  };
}

/** The observation text: the grid rows, and the reason when the last turn was invalid. */
export function gridText(rows: readonly string[], invalidReason?: string): string {
  return rows.join('\n') + (invalidReason === undefined ? '' : `\ninvalid: ${invalidReason}`);
}
