/**
 * Turn bookkeeping shared by the grid puzzles (FrozenLake, Sokoban): a step budget counted in
 * moves, an invalid turn costing one step and the format penalty, and the grid text plus an
 * `invalid: <reason>` line as the observation.
 */
import type { Observation, StepResult } from '../core/types.ts';

export interface GridEpisode {
  stepsUsed: number;
  ended: boolean;
}

/** The result of a turn whose action did not parse: one step used, the format penalty, maybe the end. */
export function invalidGridTurn(
  episode: GridEpisode,
  reason: string,
  { maxSteps, formatPenalty }: { maxSteps: number; formatPenalty: number },
  observe: (reason: string) => Observation,
): StepResult {
  episode.stepsUsed++;
  const truncated = episode.stepsUsed >= maxSteps;
  episode.ended = truncated;
  return {
    observation: observe(reason),
    reward: -formatPenalty,
    done: false,
    truncated,
    info: { invalidAction: true, reason, ...(truncated ? { success: false } : {}) },
  };
}

/** The observation text: the grid rows, and the reason when the last turn was invalid. */
export function gridText(rows: readonly string[], invalidReason?: string): string {
  return rows.join('\n') + (invalidReason === undefined ? '' : `\ninvalid: ${invalidReason}`);
}
