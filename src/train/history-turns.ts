/**
 * `historyTurns` in a trainer's config and on the command line: how many previous turns the policy
 * sees besides the system prompt and the current message — a count (0 = the current message only,
 * one training segment per turn), or `'all'` (the whole conversation, one sequence per episode).
 *
 *   historyTurns: 'all'          # config file;   --history-turns all   on the command line
 *   historyTurns: 2              #                --history-turns 2
 *
 * The rollout takes the count, or nothing for the whole conversation: `rolloutHistoryTurns`.
 * Runs saved before `'all'` existed wrote the whole conversation as -1; it still reads as `'all'`
 * (so their stored config resumes), as does `--history-turns -1`.
 */
import { type CountOrAll, countOrAllSchema } from '../core/count-or-all.ts';

export type HistoryTurns = CountOrAll;

/** Typed as a config's value (`HistoryTurns`); flags and stored configs reach it as any JSON value. */
export const historyTurnsSchema = countOrAllSchema(
  "expected a count of previous turns (0, 1, 2, …) or 'all' (the whole conversation)",
);

/** The rollout's `historyTurns`: the count, or undefined for the whole conversation. */
export function rolloutHistoryTurns(historyTurns: HistoryTurns): number | undefined {
  return historyTurns === 'all' ? undefined : historyTurns;
}
