/**
 * A config value that is a count or `'all'` (historyTurns, recordTrajectories): a non-negative
 * integer, or the literal `'all'`. Flags arrive as text (`--record-trajectories 8`, `all`); configs
 * and runs saved before `'all'` existed wrote -1 for it, which still reads as `'all'` (so their stored
 * config resumes), as does the flag `-1`.
 */
import { z } from 'zod';

export type CountOrAll = number | 'all';

/** What configs saved before `'all'` wrote for it. */
const savedAll = -1;

/** A flag's text as a count or 'all'; a saved -1 as 'all'; anything else as it is (the schema names the problem). */
function readCountOrAll(value: unknown): unknown {
  if (value === savedAll || value === String(savedAll)) return 'all';
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  return value;
}

/** The schema of a count-or-all value; `expected` is the error message for anything else. */
export function countOrAllSchema(expected: string) {
  const value = z.union([z.literal('all'), z.number().int().nonnegative({ error: expected })], { error: expected });
  return z.preprocess<unknown, typeof value, CountOrAll>(readCountOrAll, value);
}
