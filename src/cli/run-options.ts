/**
 * Flags every recorded run shares: the config file, the run store, resuming, and what is recorded.
 * `effectiveConfig` is what a run saves: every option after defaults, file and flags, less these
 * invocation details (so `--resume` can rebuild the options from the stored run).
 */
import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { countOrAllSchema } from '../core/count-or-all.ts';
import { defaultStorePath } from '../store/run-store.ts';

export const runOptionsShape = {
  config: z
    .string()
    .optional()
    .describe('YAML or JSON file of these options (camelCase or kebab-case keys); flags override it'),
  store: z
    .string()
    .default(defaultStorePath)
    .describe('run store (SQLite file): config, metrics, trajectories, checkpoints'),
  resume: z
    .string()
    .optional()
    .describe('continue run <id|name> from its last checkpoint (its saved config; flags override)'),
  runName: z.string().optional().describe('name of the new run (default <env>-<algo>-<id>)'),
  recordTrajectories: countOrAllSchema("expected a count of trajectories per iteration (0, 1, 2, …) or 'all'")
    .default('all')
    .describe("trajectories recorded per iteration: the first N of the batch, or 'all'"),
} as const;

const invocationKeys = ['config', 'store', 'resume', 'runName'] as const;

export function effectiveConfig(options: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(options).filter(
      ([key, value]) => !(invocationKeys as readonly string[]).includes(key) && value !== undefined,
    ),
  );
}

/** The agentrl source's git commit (with `-dirty` when it has uncommitted changes), or null outside git. */
export function sourceCommit(): string | null {
  const cwd = dirname(fileURLToPath(import.meta.url));
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return dirty ? `${head}-dirty` : head;
  } catch {
    return null;
  }
}
