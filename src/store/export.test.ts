import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parquetMetadata, parquetReadObjects, parquetSchema as readSchema } from 'hyparquet';
import { at } from '../core/indexing.ts';
import { exportRow, exportTrajectories } from './export.ts';
import { RunStore } from './run-store.ts';
import { syntheticStep } from './test-data.ts';

const bin = fileURLToPath(new URL('../../bin/agentrl.js', import.meta.url));

/** A store in `dir` with one bandit run of 3 recorded steps. */
function recordedRun(dir: string) {
  const path = join(dir, 'agentrl.db');
  const store = RunStore.open(path);
  const config = { env: 'bandit' };
  const run = store.createRun({ command: 'train', namePrefix: 'bandit-grpo', seed: 1, gitCommit: null, config });
  for (let step = 1; step <= 3; step++) store.recordStep(run.id, syntheticStep(step, 24));
  return { path, store, run };
}

test('export: JSONL and Parquet rows carry messages, token ids, masks, rewards and advantages; Parquet reads back', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-export-'));
  try {
    const { path, store, run } = recordedRun(dir);
    const records = [...store.iterateTrajectories(run.id)];
    // One trajectory was not trained on (its group was dropped): its advantages stay null; one carries a rubric's parts.
    const parts = { rewardComponents: { envSuccess: 0 }, rewardFailures: { judge: 'HTTP 500' } };
    const trajectories = records.map((t, i) =>
      i === 5 ? { ...t, advantages: null } : i === 2 ? { ...t, ...parts } : t,
    );
    const expected = trajectories.map((t) => exportRow(run, t));

    const first = at(expected, 0, 'export rows');
    assert.equal(first.data_source, 'agentrl/bandit');
    assert.deepEqual(first.prompt, [{ role: 'user', content: 'observation 1' }]);
    assert.deepEqual(first.completion, [{ role: 'assistant', content: 'action 1.0' }]);
    assert.equal(first.input_ids.length, 24);
    assert.deepEqual(first.loss_mask, at(records, 0, 'trajectories').lossMask);

    const jsonl = join(dir, 'out.jsonl');
    const progress: number[] = [];
    assert.equal(
      await exportTrajectories({ run, trajectories, format: 'jsonl', out: jsonl, onProgress: (n) => progress.push(n) }),
      6,
    );
    assert.deepEqual(progress.at(-1), 6);
    const lines = (await readFile(jsonl, 'utf8')).trimEnd().split('\n');
    assert.deepEqual(
      lines.map((line) => JSON.parse(line)),
      expected,
    );

    const parquet = join(dir, 'out.parquet');
    assert.equal(await exportTrajectories({ run, trajectories, format: 'parquet', out: parquet, batchSize: 4 }), 6);
    const file = new Uint8Array(await readFile(parquet)).buffer;
    const metadata = parquetMetadata(file);
    assert.equal(Number(metadata.num_rows), 6);
    assert.equal(metadata.row_groups.length, 2, 'batches of 4 rows');
    const columns = readSchema(metadata).children.map((c) => c.element.name);
    assert.deepEqual(columns, Object.keys(first));
    const rows = await parquetReadObjects({ file });
    const nullable = ['advantages', 'reward_components', 'reward_failures'];
    const normalized = rows.map((row) => ({
      ...row,
      seed: Number(row.seed),
      ...Object.fromEntries(nullable.map((name) => [name, row[name] ?? null])),
    }));
    assert.deepEqual(normalized, expected);
    assert.deepEqual(
      (await readdir(dir)).sort(),
      ['agentrl.db', 'agentrl.db-shm', 'agentrl.db-wal', 'out.jsonl', 'out.parquet'],
      'no temp files left',
    );

    // The command: positional run, --format, progress on stderr, summary on stdout.
    store.close();
    const cli = spawnSync(
      process.execPath,
      [bin, 'export', 'bandit-grpo-1', '--format', 'parquet', '--store', path, '--out', join(dir, 'cli.parquet')],
      { encoding: 'utf8' },
    );
    assert.equal(cli.status, 0, cli.stderr);
    assert.match(cli.stdout, /cli\.parquet: 6 trajectories of run bandit-grpo-1 \(parquet/);
    assert.match(cli.stderr, /export parquet \[█+\] 6\/6/);
    assert.equal(
      (await parquetReadObjects({ file: new Uint8Array(await readFile(join(dir, 'cli.parquet'))).buffer })).length,
      6,
    );
    const missing = spawnSync(process.execPath, [bin, 'export', 'nope', '--store', path], { encoding: 'utf8' });
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /no run "nope"; runs: 1 \(bandit-grpo-1\)/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("export: a rubric's components and failures become sorted {name, value|error} lists, null without any", () => {
  const run = { name: 'r-1', config: { env: 'bandit' } } as unknown as Parameters<typeof exportRow>[0];
  const base = { ...at(syntheticStep(1, 8).trajectories ?? [], 0, 'trajectories'), step: 1 } as unknown as Parameters<
    typeof exportRow
  >[1];
  const scored = exportRow(run, { ...base, rewardComponents: { tool_call: 1, envSuccess: 0.5 } });
  assert.deepEqual(scored.reward_components, [
    { name: 'envSuccess', value: 0.5 },
    { name: 'tool_call', value: 1 },
  ]);
  assert.equal(scored.reward_failures, null);
  const failed = exportRow(run, {
    ...base,
    rewardComponents: { envSuccess: 0 },
    rewardFailures: { judge: 'HTTP 500' },
  });
  assert.deepEqual(failed.reward_failures, [{ name: 'judge', error: 'HTTP 500' }]);
  assert.equal(exportRow(run, base).reward_components, null);
});
