/**
 * The count-or-`all` flags (src/core/count-or-all.ts): `--history-turns` and
 * `--record-trajectories` take a count or `all` on the command line and in config files; a run saved
 * when `all` was written -1 still resumes (and is saved back as 'all').
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../store/run-store.ts';
import { runCli, tinyTrainFlags } from './cli-test-fixture.ts';
import { trainHelp, resolveTrainOptions } from './train-command.ts';

test('--history-turns takes a count or all (and the -1 of old commands); 0 by default; anything else is refused naming both', () => {
  const historyTurns = (...argv: string[]) => resolveTrainOptions(argv).options.historyTurns;
  assert.deepEqual(
    [
      historyTurns(),
      historyTurns('--history-turns', 'all'),
      historyTurns('--history-turns', '2'),
      historyTurns('--history-turns=-1'),
    ],
    [0, 'all', 2, 'all'],
  );
  assert.throws(
    () => historyTurns('--history-turns', 'everything'),
    /--history-turns: expected a count of previous turns \(0, 1, 2, …\) or 'all'/,
  );
  assert.match(trainHelp([]), /--history-turns <all\|number>\s+previous turns the policy sees: a count, or 'all'/);
});

test('--record-trajectories takes a count or all (and the -1 of old commands); all by default; anything else is refused', () => {
  const recorded = (...argv: string[]) => resolveTrainOptions(argv).options.recordTrajectories;
  assert.deepEqual(
    [
      recorded(),
      recorded('--record-trajectories', 'all'),
      recorded('--record-trajectories', '3'),
      recorded('--record-trajectories=-1'),
    ],
    ['all', 'all', 3, 'all'],
  );
  assert.throws(
    () => recorded('--record-trajectories', '-2'),
    /--record-trajectories: expected a count of trajectories per iteration \(0, 1, 2, …\) or 'all'/,
  );
  assert.match(trainHelp([]), /--record-trajectories <all\|number>\s+trajectories recorded per iteration/);
});

const tiny = tinyTrainFlags();

test('a run whose stored config says historyTurns and recordTrajectories -1 (saved before "all") resumes, records the whole batch, and is saved back as "all"', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-history-turns-'));
  const store = join(dir, 'runs.db');
  try {
    const first = await runCli([
      'train',
      ...tiny,
      '--iterations',
      '1',
      '--history-turns',
      'all',
      '--record-trajectories',
      '1',
      '--store',
      store,
      '--run-name',
      'old',
      '--out',
      join(dir, 'checkpoints'),
    ]);
    assert.equal(first.code, 0, first.stderr);
    const runs = RunStore.open(store);
    try {
      const run = runs.run('old');
      assert.equal(run.config.historyTurns, 'all');
      assert.equal(run.config.recordTrajectories, 1);
      assert.equal(runs.countTrajectories(run.id), 1, '--record-trajectories 1 keeps the first of the batch');
      runs.setConfig(run.id, { ...run.config, historyTurns: -1, recordTrajectories: -1 });
    } finally {
      runs.close();
    }
    const resumed = await runCli(['train', '--resume', 'old', '--store', store, '--iterations', '2']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /resuming run old after iteration 1 \(1 to go\)/);
    const after = RunStore.open(store);
    try {
      assert.equal(after.run('old').config.historyTurns, 'all');
      assert.equal(after.run('old').config.recordTrajectories, 'all');
      assert.equal(
        after.countTrajectories(after.run('old').id),
        1 + 2 * 4,
        'iteration 2 recorded its whole batch (2 tasks × G 4)',
      );
      assert.equal(after.run('old').status, 'completed');
    } finally {
      after.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
