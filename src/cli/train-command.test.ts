import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCheckpoint } from '../model/checkpoint.ts';
import { RunStore } from '../store/run-store.ts';
import type { RunRecord } from '../store/types.ts';
import { agentrlBin as bin, runCli, tinyTrainFlags } from './cli-test-fixture.ts';

const trainArgs = (out: string, storePath: string): string[] => [
  bin,
  'train',
  '--out',
  out,
  '--store',
  storePath,
  ...tinyTrainFlags({
    demonstrations: 32,
    'sft-steps': 20,
    iterations: 200,
    'tasks-per-iteration': 4,
    'test-episodes': 8,
    'validation-episodes': 8,
  }),
];

/** A 200-iteration bandit run, Ctrl-C (SIGINT) after the second iteration's progress line. */
async function trainUntilCtrlC(
  out: string,
  storePath: string,
): Promise<{ code: number | null; stdout: string; stderr: string; interrupted: boolean }> {
  const child = spawn(process.execPath, trainArgs(out, storePath), { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  let interrupted = false;
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    // After the second iteration's progress line, press Ctrl-C.
    if (!interrupted && /rl grpo \[[^\]]*\] 2\/200/.test(stderr)) {
      interrupted = true;
      child.kill('SIGINT');
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr, interrupted };
}

/** The interrupted run in the store: its effective config and one metrics row per saved iteration. */
function checkInterruptedRun(store: RunStore, iterations: number): RunRecord {
  const run = store.run('bandit-grpo-1');
  assert.equal(run.status, 'interrupted');
  assert.equal(run.statusReason, 'Ctrl-C during the RL iterations');
  assert.equal(run.config.hiddenSize, 32);
  assert.equal(run.config.learningRate, 1e-4, 'defaults are part of the effective config');
  assert.deepEqual(
    store.metrics(run.id).map((m) => m.step),
    Array.from({ length: iterations }, (_, i) => i + 1),
  );
  assert.equal(store.trajectoryList(run.id).filter((t) => t.step === 1).length, 16);
  return run;
}

/** `--resume` (with --iterations raised), SIGKILLed a moment after its first resumed iteration is reported. */
async function resumeThenKill(
  storePath: string,
  iterations: number,
): Promise<{ signal: NodeJS.Signals | null; stderr: string }> {
  const killed = spawn(
    process.execPath,
    [bin, 'train', '--resume', 'bandit-grpo-1', '--store', storePath, '--iterations', '200'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  let timer: NodeJS.Timeout | undefined;
  killed.stderr.on('data', (chunk) => {
    stderr += chunk;
    // Once the first resumed iteration is reported, kill a moment later: mid-commit or mid-iteration.
    if (timer === undefined && stderr.includes(`] ${iterations + 1}/200`))
      timer = setTimeout(() => killed.kill('SIGKILL'), 150);
  });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    killed.on('close', (_code, closedBy) => resolve(closedBy)),
  );
  return { signal, stderr };
}

/** A last `--resume` trains one more iteration to the end; resuming a finished run is refused. */
async function resumeToTheEnd(
  store: RunStore,
  run: RunRecord,
  { out, storePath, committed }: { out: string; storePath: string; committed: number },
): Promise<void> {
  const resumed = await runCli([
    'train',
    '--resume',
    'bandit-grpo-1',
    '--store',
    storePath,
    '--iterations',
    String(committed + 1),
  ]);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stderr, new RegExp(`resuming run bandit-grpo-1 after iteration ${committed}`));
  assert.match(resumed.stdout, new RegExp(`after ${committed + 1} iterations`));
  assert.equal((await loadCheckpoint(join(out, 'final'))).extra?.iteration, committed + 1);
  assert.equal(store.run(run.id).status, 'completed');
  assert.deepEqual(
    store.metrics(run.id).map((m) => m.step),
    Array.from({ length: committed + 1 }, (_, i) => i + 1),
  );
  const done = await runCli(['train', '--resume', String(run.id), '--store', storePath]);
  assert.equal(done.code, 2);
  assert.match(done.stderr, /has finished \d+ of \d+ iterations; pass --iterations N/);
}

test('agentrl train: progress per iteration, Ctrl-C saves the iteration, marks the run interrupted and exits 130; --resume survives SIGKILL and continues', async () => {
  const out = await mkdtemp(join(tmpdir(), 'agentrl-train-'));
  const storePath = join(out, 'runs.db');
  try {
    const { code, stdout, stderr, interrupted } = await trainUntilCtrlC(out, storePath);
    assert.ok(interrupted, `never reached iteration 2:\n${stderr}`);
    assert.equal(code, 130, stderr);
    assert.match(stderr, /reward [\d.]+\s+success [\d.]+\s+kl [\d.e+-]+\s+entropy [\d.e+-]+\s+gen tok\/s \d+/);
    assert.match(stderr, /train: Ctrl-C — finishing this iteration, then saving it/);
    assert.match(
      stderr,
      /train: run bandit-grpo-1 interrupted \(Ctrl-C during the RL iterations\); continue it with: agentrl train --resume bandit-grpo-1/,
    );
    assert.doesNotMatch(stdout, /held-out test success/, 'an interrupted run skips the final test');
    const iterations = Number(/saved iteration (\d+) of 200/.exec(stderr)?.[1]);
    assert.ok(iterations >= 2 && iterations < 200, `${iterations} iterations before stopping`);
    const checkpoint = await loadCheckpoint(join(out, 'latest'));
    assert.equal(checkpoint.config.hiddenSize, 32);
    assert.equal(checkpoint.extra?.iteration, iterations);
    assert.deepEqual(checkpoint.extra?.stopStrings, ['</answer>', '</tool_call>'], 'what serve-policy ends replies at');

    const store = RunStore.open(storePath, { readonly: true });
    const run = checkInterruptedRun(store, iterations);

    // SIGKILL mid-iteration loses only that iteration: the file stays sound with every committed step.
    const killed = await resumeThenKill(storePath, iterations);
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    assert.match(killed.stderr, new RegExp(`resuming run bandit-grpo-1 after iteration ${iterations}`));
    assert.equal(store.integrityCheck(), 'ok');
    assert.equal(store.run(run.id).status, 'running', 'a killed run stays "running"');
    const committed = store.metrics(run.id).map((m) => m.step);
    assert.deepEqual(
      committed,
      Array.from({ length: committed.length }, (_, i) => i + 1),
    );
    assert.ok(committed.length >= iterations, `${committed.length} steps committed`);

    await resumeToTheEnd(store, run, { out, storePath, committed: committed.length });
    store.close();
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('agentrl train --max-minutes: RL stops after the iteration that leaves no room for another and the test after RL; the run completes', async () => {
  const out = await mkdtemp(join(tmpdir(), 'agentrl-train-'));
  const storePath = join(out, 'runs.db');
  try {
    // A budget of 0.05 min is smaller than the 60 s kept for the saves alone: one iteration, then the test.
    const { code, stdout, stderr } = await runCli([...trainArgs(out, storePath).slice(1), '--max-minutes', '0.05']);
    assert.equal(code, 0, stderr);
    assert.match(
      stderr,
      /train: stopped after iteration 1 of 200: the time budget \(--max-minutes 0\.05\): \d+ min in, another iteration \(~\d+ s\) and the test after RL \(~\d+ s with the saves\) would not fit/,
    );
    assert.match(stdout, /held-out test success \(sampled\) [\d.]+% before RL → [\d.]+% after 1 iterations/);
    const store = RunStore.open(storePath, { readonly: true });
    try {
      const [run] = store.runs();
      assert.ok(run !== undefined);
      assert.equal(run.status, 'completed');
      assert.deepEqual(
        store.metrics(run.id).map((m) => m.step),
        [1],
      );
      assert.deepEqual(
        store.evaluations(run.id).flatMap((e) => (e.split === 'test' ? [e.step] : [])),
        [0, 1],
      );
    } finally {
      store.close();
    }
    assert.equal((await loadCheckpoint(join(out, 'final'))).extra?.iteration, 1);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
