/**
 * `agentrl dashboard`: serves the run dashboard on 127.0.0.1 (run list, metric charts with runs
 * overlaid, trajectory viewer, config diff) until Ctrl-C. Everything is served locally: no CDN.
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { startDashboard } from '../dashboard/server.ts';
import { defaultStorePath } from '../store/run-store.ts';
import { parseFlags, rejectPositional, validateFlags } from './flags.ts';

export const dashboardCommandSchema = z.object({
  store: z.string().default(defaultStorePath).describe('run store (SQLite file) to show'),
  port: z.number().int().min(0).max(65535).default(8600).describe('port on 127.0.0.1 (0 = any free port)'),
});

export async function dashboardCommand(argv: readonly string[]): Promise<number> {
  const { values, positional } = parseFlags(dashboardCommandSchema, argv);
  rejectPositional(dashboardCommandSchema, positional);
  const options = validateFlags(dashboardCommandSchema, values);
  if (!existsSync(options.store))
    throw new InvalidArgumentError(
      `no run store at ${options.store} yet: run agentrl train (or dpo, sft, gateway) here first, or pass --store <the runs.db a run wrote>`,
      { store: options.store },
    );
  const dashboard = await startDashboard(options);
  console.log(`agentrl dashboard: ${dashboard.url} (store ${options.store}; Ctrl-C to stop)`);
  await new Promise<void>((resolve) => process.once('SIGINT', resolve));
  await dashboard.close();
  return 0;
}
