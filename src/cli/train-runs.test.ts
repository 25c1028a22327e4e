/**
 * `agentrl train` as real processes: each run's own checkpoint folder, every phase resumable after
 * a signal or a kill, one process per run, and the run store's errors as one line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { loadCheckpoint } from '../model/checkpoint.ts';
import { RunStore } from '../store/run-store.ts';
import type { RunRecord } from '../store/types.ts';
import { at } from '../core/indexing.ts';
import { agentrlBin as bin, tinyTrainFlags } from './cli-test-fixture.ts';

const tiny = tinyTrainFlags({ iterations: 2 });
const timing = ['seconds', 'rolloutTokensPerSecond', 'trainTokensPerSecond'];

interface Running {
  child: ChildProcess;
  stderr: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/** Starts `agentrl …` in `cwd`; `onStderr` sees the growing stderr (to signal the process at a known point). */
function start(cwd: string, args: string[], onStderr?: (stderr: string, child: ChildProcess) => void): Running {
  const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
    onStderr?.(stderr, child);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) =>
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr });
      }),
  );
  return { child, stderr: () => stderr, done };
}

function once(
  test: (stderr: string) => boolean,
  act: (child: ChildProcess) => void,
): (stderr: string, child: ChildProcess) => void {
  let fired = false;
  return (stderr, child) => {
    if (!fired && test(stderr)) {
      fired = true;
      act(child);
    }
  };
}

function withoutTiming(values: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(values).filter(([key]) => !timing.includes(key)));
}

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'agentrl-runs-')));
  try {
    await body(dir);
  } finally {
    spawnSync('chattr', ['-R', '-i', dir], { stdio: 'ignore' });
    await rm(dir, { recursive: true, force: true });
  }
}

test('agentrl train: two concurrent runs of one env/algo keep their own folders; SIGTERM in the warm start marks the run interrupted (143) and --resume finishes it', async () => {
  await withDir(async (dir) => {
    const store = join(dir, 'runs.db');
    const [a, b] = await Promise.all([
      start(dir, ['train', ...tiny, '--store', store]).done,
      start(dir, ['train', ...tiny, '--store', store]).done,
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const reader = RunStore.open(store, { readonly: true });
    const runs = reader.runs().reverse();
    assert.deepEqual(
      runs.map((r) => r.name),
      ['bandit-grpo-1', 'bandit-grpo-2'],
    );
    for (const run of runs) {
      assert.equal(run.checkpointDir, join(dir, 'checkpoints', run.name));
      const rows = reader.checkpoints(run.id).filter((c) => c.path !== null);
      assert.deepEqual(
        rows.map((c) => c.kind),
        ['start', 'final'],
      );
      for (const row of rows) {
        assert.ok(row.path!.startsWith(`${run.checkpointDir}/`), `${row.path} is in ${run.name}'s folder`);
        assert.equal((await loadCheckpoint(row.path!)).extra.run, run.name, "the folder holds that run's weights");
      }
    }

    // SIGTERM during the warm start: nothing of it is kept; the run says why it stopped.
    const term = await start(
      dir,
      ['train', ...tiny, '--store', store],
      once(
        (s) => /warm start \(sft\) \[/.test(s),
        (c) => c.kill('SIGTERM'),
      ),
    ).done;
    assert.equal(term.code, 143, term.stderr);
    assert.match(term.stderr, /train: SIGTERM during the warm start — stopping now/);
    assert.match(
      term.stderr,
      new RegExp(
        `train: run bandit-grpo-3 interrupted \\(SIGTERM during the warm start\\); continue it with: agentrl train --resume bandit-grpo-3 --store ${store}`,
      ),
    );
    const interrupted = reader.run('bandit-grpo-3');
    assert.equal(interrupted.status, 'interrupted');
    assert.equal(interrupted.statusReason, 'SIGTERM during the warm start');
    assert.equal(reader.lockHolder(interrupted.id), undefined, 'the lock is released');

    const resumed = await start(dir, ['train', '--resume', 'bandit-grpo-3', '--store', store]).done;
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /run bandit-grpo-3 stopped before its warm start ended; running the warm start again/);
    assert.equal(reader.run('bandit-grpo-3').status, 'completed');
    // The warm start is deterministic, so the resumed run is the uninterrupted one, step for step.
    const expected = reader.metrics(at(runs, 0).id).map((m) => withoutTiming(m.values));
    assert.deepEqual(
      reader.metrics(interrupted.id).map((m) => withoutTiming(m.values)),
      expected,
    );
    assert.deepEqual(
      reader.evaluations(interrupted.id).map((e) => [e.step, e.split, e.success]),
      reader.evaluations(at(runs, 0).id).map((e) => [e.step, e.split, e.success]),
    );
    reader.close();
  });
});

/**
 * One process at a time: while a --resume of the run is in its 3rd iteration, a second --resume is refused
 * naming the holder; SIGTERM then stops the first after saving its iteration (exit 143, run interrupted).
 */
async function assertOneResumeAtATime(dir: string, store: string, reader: RunStore, runId: RunRecord['id']) {
  const first = start(dir, ['train', '--resume', 'bandit-grpo-1', '--store', store, '--iterations', '200']);
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (/\] 3\/200 /.test(first.stderr())) resolve();
      else return;
      clearInterval(poll);
    }, 50);
    void first.done.then((r) => reject(new Error(`the first resume ended: ${r.stderr}`)));
  });
  const second = await start(dir, ['train', '--resume', 'bandit-grpo-1', '--store', store, '--iterations', '200']).done;
  assert.equal(second.code, 1);
  assert.equal(
    second.stderr,
    `agentrl train: ${store}: run bandit-grpo-1 is in use by process ${first.child.pid} on ${/on (\S+) \(since/.exec(second.stderr)?.[1]} (since ${/since ([^)]+)\)/.exec(second.stderr)?.[1]}); wait for it to end, or stop it (kill ${first.child.pid}) and resume again\n`,
  );
  first.child.kill('SIGTERM');
  const stopped = await first.done;
  assert.equal(stopped.code, 143, stopped.stderr);
  assert.match(
    stopped.stderr,
    /train: SIGTERM — finishing this iteration, then saving it \(SIGTERM again to stop at once\)/,
  );
  assert.match(stopped.stderr, /train: saved iteration \d+ of 200/);
  const after = reader.run(runId);
  assert.equal(after.status, 'interrupted');
  assert.equal(after.statusReason, 'SIGTERM during the RL iterations');
  const steps = reader.metrics(runId).map((m) => m.step);
  assert.deepEqual(
    steps,
    Array.from({ length: steps.length }, (_, i) => i + 1),
  );
  assert.ok(steps.length >= 3, `${steps.length} iterations committed`);
}

test('agentrl train: a run killed between its last iteration and the final test finishes on --resume; a second --resume is refused; SIGTERM mid-iterations saves and exits 143', async () => {
  await withDir(async (dir) => {
    const store = join(dir, 'runs.db');
    // SIGKILL once the final held-out test (48 seeds) has begun: every iteration is committed.
    const lastIterationDone = (s: string) => /train: measuring held-out test success after RL/.test(s);
    const killed = await start(
      dir,
      ['train', ...tiny, '--test-episodes', '48', '--store', store],
      once(lastIterationDone, (c) => c.kill('SIGKILL')),
    ).done;
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const reader = RunStore.open(store, { readonly: true });
    const run = reader.run('bandit-grpo-1');
    assert.equal(run.status, 'running', "a killed run stays running, with its dead process's lock");
    const deadPid = reader.lockHolder(run.id)!.pid;
    assert.deepEqual(
      reader.metrics(run.id).map((m) => m.step),
      [1, 2],
    );
    assert.ok(!reader.checkpoints(run.id).some((c) => c.kind === 'final'), 'no final checkpoint yet');

    const finished = await start(dir, ['train', '--resume', 'bandit-grpo-1', '--store', store]).done;
    assert.equal(finished.code, 0, finished.stderr);
    assert.match(
      finished.stderr,
      new RegExp(`run bandit-grpo-1 was held by process ${deadPid}, which no longer runs; taking it over`),
    );
    assert.match(
      finished.stderr,
      /resuming run bandit-grpo-1: its 2 iterations are done; running the held-out test after RL to finish it/,
    );
    assert.equal(reader.run(run.id).status, 'completed');
    assert.deepEqual(
      reader.metrics(run.id).map((m) => m.step),
      [1, 2],
    );
    assert.deepEqual(
      reader
        .checkpoints(run.id)
        .filter((c) => c.kind === 'final')
        .map((c) => [c.step, c.path]),
      [[2, join(dir, 'checkpoints', 'bandit-grpo-1', 'final')]],
    );
    assert.deepEqual(
      reader
        .evaluations(run.id)
        .filter((e) => e.split === 'test')
        .map((e) => e.step),
      [0, 2],
    );

    await assertOneResumeAtATime(dir, store, reader, run.id);
    reader.close();
  });
});

test('agentrl: a store that is not a database, has another schema or is read-only is one line naming it and the fix (no stack trace)', async () => {
  await withDir(async (dir) => {
    const notes = join(dir, 'notes.db');
    await writeFile(notes, 'my notes\n'.repeat(100));
    const other = join(dir, 'other.db');
    const db = new Database(other);
    db.exec('CREATE TABLE runs (id INTEGER PRIMARY KEY, foo TEXT)');
    db.close();
    const readOnly = join(dir, 'read-only.db');
    const store = RunStore.open(readOnly);
    store.createRun({ command: 'train', name: 'old', seed: 0, gitCommit: null, config: {} });
    store.close();
    let immutable = true;
    if (process.getuid?.() === 0) immutable = spawnSync('chattr', ['+i', readOnly]).status === 0;
    else spawnSync('chmod', ['444', readOnly]);
    const [notDatabase, otherSchema, readOnlyResume] = await Promise.all([
      start(dir, ['train', '--env', 'bandit', '--store', notes]).done,
      start(dir, ['export', 'x', '--store', other]).done,
      immutable ? start(dir, ['train', '--resume', 'old', '--store', readOnly]).done : undefined,
    ]);
    assert.equal(notDatabase.code, 1);
    assert.equal(
      notDatabase.stderr,
      `agentrl train: ${notes}: is not a SQLite database, so not an agentrl run store; pass --store with another file (or move this one away)\n`,
    );
    assert.equal(otherSchema.code, 1);
    assert.equal(
      otherSchema.stderr,
      `agentrl export: ${other}: is an SQLite database with another schema (no column runs.name, runs.command, runs.status, …), not an agentrl run store; pass --store with another file\n`,
    );
    if (readOnlyResume) {
      assert.equal(readOnlyResume.code, 1);
      assert.match(
        readOnlyResume.stderr,
        new RegExp(
          `^agentrl train: ${readOnly}: the run store is read-only \\(.*\\) while opening it; make the file writable \\(chmod u\\+w, or remount the disk read-write\\), or copy it and pass --store <copy>\\n$`,
        ),
      );
    }
    assert.ok(!existsSync(join(dir, 'checkpoints')), 'nothing was trained');
  });
});

test('agentrl dpo: options from --config, the run recorded in the store with its metrics, tests and checkpoint', async () => {
  await withDir(async (dir) => {
    const store = join(dir, 'runs.db');
    const config = join(dir, 'dpo.yaml');
    await writeFile(
      config,
      [
        'env: bandit',
        'iterations: 2',
        'tasks-per-iteration: 2',
        'groupSize: 4',
        'learningRate: 2e-3',
        'maxSeqLen: 64',
        'maxTurns: 1',
        'maxNewTokens: 24',
        'testEpisodes: 4',
        'validationEpisodes: 4',
        'validateEvery: 0',
        'demonstrations: 16',
        'sftSteps: 12',
        'hiddenSize: 32',
        'numLayers: 1',
        'numHeads: 2',
        'numKvHeads: 1',
        'intermediateSize: 64',
        '',
      ].join('\n'),
    );
    const result = await start(dir, ['dpo', '--config', config, '--store', store, '--seed', '1']).done;
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(`${result.stdout}${result.stderr}`, /NaN/, 'no NaN on the progress line');
    const reader = RunStore.open(store, { readonly: true });
    const run = reader.run('bandit-dpo-1');
    assert.equal(run.command, 'dpo');
    assert.equal(run.status, 'completed');
    assert.equal(run.config.learningRate, 2e-3, "the file's value");
    assert.equal(run.config.seed, 1, 'the flag over the file');
    assert.deepEqual(
      reader.metrics(run.id).map((m) => m.step),
      [1, 2],
    );
    assert.ok(
      ['loss', 'pairs', 'success', 'rewardAccuracy', 'margin'].every(
        (key) => key in at(reader.metrics(run.id), 0).values,
      ),
    );
    assert.deepEqual(
      reader
        .evaluations(run.id)
        .filter((e) => e.split === 'test')
        .map((e) => e.step),
      [0, 2],
    );
    assert.deepEqual(
      reader.checkpoints(run.id).map((c) => [c.kind, c.path]),
      [['final', join(dir, 'checkpoints', 'bandit-dpo-1', 'final')]],
    );
    reader.close();
  });
});
