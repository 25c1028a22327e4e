/**
 * After run.sh's `agentrl train --backend tinker …` (the trainer's own loop, runRl): reads the run
 * store and checks the run is recorded like a built-in one — completed, one metrics row per
 * iteration with a finite loss, trajectories, checkpoints whose folders hold
 * tinker-checkpoint.json — then prints the time split per iteration from the recorded
 * `backendMs/<kind>` metrics: sampling, forward (scoring), forward_backward, optim_step,
 * sampler-weight sync, and the rest of the iteration's wall time (agentrl's own work).
 *
 *   node --import tsx scripts/check-tinker/train-check.ts --store runs.db --run-name tinker-e2e --iterations 2
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { RunStore } from '../../src/store/run-store.ts';
import { activeKl } from '../../src/train/algorithm-presets.ts';
import { effectivePreset, rlConfigSchema } from '../../src/train/rl.ts';

const { values } = parseArgs({
  options: { store: { type: 'string' }, 'run-name': { type: 'string' }, iterations: { type: 'string', default: '2' } },
});
if (values.store === undefined || values['run-name'] === undefined) {
  process.stderr.write('usage: train-check.ts --store <runs.db> --run-name <name> [--iterations N]\n');
  process.exit(2);
}
const failures: string[] = [];
const check = (ok: boolean, message: string): void => {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${message}\n`);
  if (!ok) failures.push(message);
};

const store = RunStore.open(values.store, { readonly: true });
try {
  const run = store.run(values['run-name']);
  const iterations = Number(values.iterations);
  check(
    run.status === 'completed',
    `run ${run.name} (id ${run.id}) status ${run.status}${run.statusReason ? ` (${run.statusReason})` : ''}`,
  );
  check(
    run.config.backend === 'tinker',
    `config records backend ${String(run.config.backend)}, base model ${String(run.config.baseModel)}, LoRA rank ${String(run.config.loraRank)}`,
  );
  const metrics = store.metrics(run.id);
  check(metrics.length === iterations, `${metrics.length} metrics rows for ${iterations} iterations`);
  // The run's KL to the reference (metric klToReference) where its preset has one (coefficient > 0), named by estimator and placement.
  const kl = activeKl(effectivePreset(rlConfigSchema.parse(run.config)));
  for (const row of metrics) {
    const { loss, reward, klToReference } = row.values;
    const klText =
      kl === null
        ? 'no KL to a reference'
        : `KL to reference ${klToReference?.toExponential(2)} (${kl.estimator}, in the ${kl.placement})`;
    check(
      Number.isFinite(loss) && (kl === null || Number.isFinite(klToReference)),
      `iteration ${row.step}: loss ${loss} finite (reward ${reward?.toFixed(3)}, ${klText})`,
    );
  }
  const trajectories = store.countTrajectories(run.id);
  check(trajectories > 0, `${trajectories} trajectories recorded`);
  const checkpoints = store.checkpoints(run.id);
  const kinds = checkpoints.map((c) => c.kind);
  check(
    kinds.includes('start') && kinds.includes('final') && kinds.filter((k) => k === 'resume').length === iterations,
    `checkpoints: ${kinds.join(', ')}`,
  );
  // The store keeps the state of the newest resume row only (older rows keep their folder path).
  const resumable = store.latestCheckpoint(run.id, 'resume');
  check(
    resumable?.step === iterations && store.checkpointState(resumable.id).length > 0,
    `the last iteration's resume checkpoint (step ${resumable?.step}) holds resumable state`,
  );
  for (const folder of new Set(checkpoints.map((c) => c.path).filter((path): path is string => path !== null))) {
    let tinkerPath: unknown;
    try {
      tinkerPath = (
        JSON.parse(await readFile(join(folder, 'tinker-checkpoint.json'), 'utf8')) as { tinkerPath?: unknown }
      ).tinkerPath;
    } catch (error) {
      tinkerPath = (error as Error).message;
    }
    check(
      typeof tinkerPath === 'string' && tinkerPath.startsWith('tinker://'),
      `${folder}/tinker-checkpoint.json names ${String(tinkerPath)}`,
    );
  }
  check(
    store.evaluations(run.id).some((e) => e.split === 'test'),
    'held-out test results recorded',
  );

  // The time split: the recorded backendMs/<kind> of each iteration against its wall time.
  const phases = [
    ['sample', 'sampling'],
    ['forward', 'forward (scoring)'],
    ['forwardBackward', 'forward_backward'],
    ['optimStep', 'optim_step'],
    ['samplerSync', 'sampler sync'],
  ] as const;
  const header = [
    'iteration',
    'total ms',
    ...phases.map(([, label]) => label),
    'KL reference (setup + calls)',
    'other (agentrl)',
  ];
  const rows = metrics.map((row) => {
    const total = row.values.seconds! * 1000;
    const parts = phases.map(([kind]) => row.values[`backendMs/${kind}`]);
    const referenceMs = Object.entries(row.values)
      .filter(([key]) => key.startsWith('backendMs/reference.'))
      .reduce((sum, [, ms]) => sum + (ms ?? 0), 0);
    const other = total - parts.reduce((sum: number, ms) => sum + (ms ?? 0), 0) - referenceMs;
    check(
      parts.every((ms) => ms !== undefined && Number.isFinite(ms)),
      `iteration ${row.step}: backendMs/* recorded for ${phases.map(([kind]) => kind).join(', ')}`,
    );
    const cell = (ms: number | undefined) =>
      ms === undefined ? '—' : `${ms.toFixed(0)} (${((100 * ms) / total).toFixed(1)}%)`;
    return [
      String(row.step),
      total.toFixed(0),
      ...parts.map(cell),
      cell(referenceMs),
      // The client overlaps calls (forward_backward with optim_step, the reference with scoring): then the
      // per-kind times add up past the wall time, and agentrl's own share is not their difference.
      other >= 0 ? `${other.toFixed(0)} (${((100 * other) / total).toFixed(2)}%)` : '— (calls overlapped)',
    ];
  });
  const table = [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
  process.stdout.write(
    `\ntime split per iteration of the agentrl train run (ms, share of the iteration's wall time):\n${table}\n\n`,
  );
} finally {
  store.close();
}
if (failures.length > 0) {
  process.stdout.write(`${failures.length} check(s) failed\n`);
  process.exit(1);
}
