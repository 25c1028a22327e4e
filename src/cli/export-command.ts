/**
 * `agentrl export <run> --format jsonl|parquet`: the run's recorded trajectories as a dataset for
 * TRL / verl (schema: docs/trajectory-export.md), with a progress line.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { exportTrajectories } from '../store/export.ts';
import { RunStore, defaultStorePath } from '../store/run-store.ts';
import { parseFlags, validateFlags } from './flags.ts';
import { Progress } from './progress.ts';

export const exportCommandSchema = z.object({
  format: z.enum(['jsonl', 'parquet']).default('jsonl').describe('output format'),
  out: z.string().optional().describe('output file (default <run name>.<format>)'),
  store: z.string().default(defaultStorePath).describe('run store (SQLite file)'),
});

export async function exportCommand(argv: readonly string[]): Promise<number> {
  const { values, positional } = parseFlags(exportCommandSchema, argv);
  const options = validateFlags(exportCommandSchema, values);
  const [runReference] = positional;
  if (positional.length !== 1 || runReference === undefined)
    throw new InvalidArgumentError(
      `export takes one run (id or name), got ${positional.length}: agentrl export <run> --format jsonl|parquet`,
    );
  const store = RunStore.open(options.store, { readonly: true });
  try {
    const run = store.run(runReference);
    const out = options.out ?? `${run.name}.${options.format}`;
    const total = store.countTrajectories(run.id);
    const progress = new Progress({ label: `export ${options.format}`, total });
    const rows = await exportTrajectories({
      run,
      trajectories: store.iterateTrajectories(run.id),
      format: options.format,
      out,
      onProgress: (written) => progress.update(written),
    });
    progress.done();
    console.log(
      `${out}: ${rows} trajectories of run ${run.name} (${options.format}; schema in docs/trajectory-export.md)`,
    );
    return 0;
  } finally {
    store.close();
  }
}
