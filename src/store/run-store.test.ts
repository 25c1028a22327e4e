import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunStore, RunNotFoundError } from './run-store.ts';
import { syntheticStep, syntheticTrajectory } from './test-data.ts';

const writer = fileURLToPath(new URL('./test-writer.ts', import.meta.url));

async function withStore(body: (path: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-store-'));
  try {
    await body(join(dir, 'nested', 'agentrl.db'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function spawnWriter(
  path: string,
  runId: number,
  steps: number,
  tokens: number,
  pauseMs = 0,
): ChildProcessWithoutNullStreams {
  return spawn(
    process.execPath,
    ['--import', 'tsx', writer, path, String(runId), String(steps), String(tokens), String(pauseMs)],
    { stdio: 'pipe' },
  );
}

/** Every step 1..n is whole: its metrics, both trajectories and its checkpoint, with the values written. */
function assertWholeSteps(store: RunStore, runId: number, tokens: number): number {
  return store.transaction(() => {
    const metrics = store.metrics(runId);
    const steps = metrics.map((m) => m.step);
    assert.deepEqual(
      steps,
      steps.map((_, i) => i + 1),
      'steps are 1..n without gaps',
    );
    for (const m of metrics) assert.deepEqual(m.values, syntheticStep(m.step, tokens).metrics);
    const list = store.trajectoryList(runId);
    assert.equal(list.length, 2 * metrics.length, `${list.length} trajectories for ${metrics.length} steps`);
    assert.equal(store.checkpoints(runId).length, metrics.length);
    if (metrics.length > 0) {
      const last = metrics.length;
      assert.deepEqual(store.trajectory(runId, last, 1), { step: last, ...syntheticTrajectory(last, 1, tokens) });
      const checkpoint = store.latestCheckpoint(runId, 'resume')!;
      assert.equal(checkpoint.step, last);
      assert.deepEqual(store.checkpointState(checkpoint.id), new Uint8Array(4096).fill(last % 251));
    }
    return metrics.length;
  });
}

test('run store: a run and a step round-trip; unknown runs are named with the known ones', async () => {
  await withStore(async (path) => {
    const store = RunStore.open(path);
    const run = store.createRun({
      command: 'train',
      seed: 7,
      gitCommit: 'abc123',
      config: { learningRate: 1e-4, env: 'bandit' },
    });
    assert.equal(run.name, 'train-1');
    assert.equal(run.status, 'running');
    store.createRun({ command: 'train', name: 'baseline', seed: 7, gitCommit: null, config: {} });
    assert.throws(
      () => store.createRun({ command: 'train', name: 'baseline', seed: 7, gitCommit: null, config: {} }),
      /a run named "baseline" exists/,
    );
    store.recordStep(run.id, {
      ...syntheticStep(1, 16),
      evaluations: [{ split: 'validation', episodes: 8, success: 0.625 }],
    });
    store.addCheckpoint(run.id, { step: 0, kind: 'start', state: Uint8Array.of(1, 2, 3) });
    store.setStatus(run.id, 'completed');
    const again = RunStore.open(path, { readonly: true });
    assert.deepEqual(again.run('train-1').config, { learningRate: 1e-4, env: 'bandit' });
    assert.equal(again.run(run.id).status, 'completed');
    assert.equal(again.run(run.id).gitCommit, 'abc123');
    assert.deepEqual(
      again.evaluations(run.id).map((e) => [e.step, e.split, e.episodes, e.success]),
      [[1, 'validation', 8, 0.625]],
    );
    assert.deepEqual(
      [...again.iterateTrajectories(run.id)],
      [0, 1].map((i) => ({ step: 1, ...syntheticTrajectory(1, i, 16) })),
    );
    assert.deepEqual(again.checkpointState(again.latestCheckpoint(run.id, 'start')!.id), Uint8Array.of(1, 2, 3));
    assert.throws(
      () => again.run('nope'),
      (e: unknown) =>
        e instanceof RunNotFoundError && /no run "nope"; runs: 1 \(train-1\), 2 \(baseline\)/.test(e.message),
    );
    // The newest resume checkpoint keeps its state; older ones keep only their row.
    store.recordStep(run.id, syntheticStep(2, 16));
    assert.deepEqual(
      store.checkpoints(run.id).map((c) => [c.step, c.kind, c.hasState]),
      [
        [0, 'start', true],
        [1, 'resume', false],
        [2, 'resume', true],
      ],
    );
    store.truncateAfter(run.id, 1);
    assert.deepEqual(
      store.metrics(run.id).map((m) => m.step),
      [1],
    );
    again.close();
    store.close();
  });
});

test('run store: a reader sees only whole steps while another process writes', async () => {
  await withStore(async (path) => {
    const store = RunStore.open(path);
    const run = store.createRun({ command: 'train', seed: 0, gitCommit: null, config: {} });
    const reader = RunStore.open(path, { readonly: true });
    // A short pause after each commit spreads the writes over ~0.6 s, so the reader sees the run grow.
    const child = spawnWriter(path, run.id, 120, 64, 5);
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    let running = true;
    void exited.then(() => (running = false));
    const seen = new Set<number>();
    while (running) {
      seen.add(assertWholeSteps(reader, run.id, 64));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    assert.equal(await exited, 0, stderr);
    assert.equal(assertWholeSteps(reader, run.id, 64), 120);
    // The reader saw the run grow (several distinct partial states), not just before and after.
    assert.ok(
      [...seen].filter((n) => n > 0 && n < 120).length >= 3,
      `partial states seen: ${[...seen].sort((a, b) => a - b).join(',')}`,
    );
    reader.close();
    store.close();
  });
});

test('run store: SIGKILL during writes leaves a readable file with every committed step', async () => {
  await withStore(async (path) => {
    const store = RunStore.open(path);
    const run = store.createRun({ command: 'train', seed: 0, gitCommit: null, config: {} });
    store.close();
    // Large trajectories make each transaction long, so the kill lands inside one most of the time.
    const child = spawnWriter(path, run.id, 100_000, 4096);
    let committed = 0;
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      for (const match of buffer.matchAll(/committed (\d+)\n/g)) committed = Math.max(committed, Number(match[1]));
      if (committed >= 25 && !child.killed) child.kill('SIGKILL');
    });
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, s) => resolve(s)));
    assert.equal(signal, 'SIGKILL');
    const after = RunStore.open(path);
    assert.equal(after.integrityCheck(), 'ok');
    const steps = assertWholeSteps(after, run.id, 4096);
    assert.ok(steps >= committed, `${steps} steps in the file, ${committed} reported committed`);
    after.close();
  });
});
