/**
 * `agentrl train --star-tasks <n> --star-hint <file>`: the STaR round on the start weights, in a
 * child process (its lines, the start checkpoint's record of it), and the refusals before a run
 * is created.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCheckpoint } from '../model/checkpoint.ts';
import { runCli, tinyTrainFlags } from './cli-test-fixture.ts';
import { checkStarOptions } from './star-start.ts';

async function withTempDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-train-star-'));
  try {
    await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const hintTurns = JSON.stringify({
  messages: [
    { role: 'user', content: 'Which arm pays more?' },
    { role: 'assistant', content: 'Arm 1.' },
  ],
});

test('agentrl train --star-tasks: a STaR round on the start weights before the test and RL, recorded in the start checkpoint', () =>
  withTempDir(async (dir) => {
    const hint = join(dir, 'hint.jsonl');
    await writeFile(hint, `${hintTurns}\n`);
    const out = join(dir, 'out');
    const result = await runCli([
      'train',
      ...tinyTrainFlags({
        iterations: 1,
        'max-seq-len': 192, // the hint's turns lengthen the prompt
        // a warm start that solves the bandit often, so the round keeps successes to fine-tune on
        demonstrations: 64,
        'sft-steps': 150,
        'sft-learning-rate': 1e-2,
        'star-tasks': 6,
        'star-samples': 2,
        'star-steps': 2,
        'star-batch-size': 2,
        'star-hint': hint,
        out,
        store: join(dir, 'runs.db'),
      }),
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /train: STaR round on 6 train tasks × 2, the unsolved again with the 2 earlier turns of .*hint\.jsonl …/,
    );
    const summary =
      /train: STaR round: solved unaided (\d) of 6 tasks, with the hint (\d) more; (\d+) distinct successful episodes kept, fine-tuned 2 steps \(loss [\d.]+ → [\d.]+\)/.exec(
        result.stderr,
      );
    assert.ok(summary, result.stderr);
    const [unaided, hinted, kept] = summary.slice(1).map(Number);
    // Every solved task gave at least one kept episode; equal replies are kept once.
    assert.ok(unaided! + hinted! >= 1 && kept! >= 1);
    // Each step of the round shows its progress: the episodes played (all 12 unaided), then the SFT steps.
    assert.match(result.stderr, /star play .*12\/12/);
    assert.match(result.stderr, /star sft .*2\/2/);
    // The STaR round comes before the held-out test: the start state is the policy after it.
    assert.ok(result.stderr.indexOf('STaR round:') < result.stderr.indexOf('held-out test success before RL'));
    const start = await loadCheckpoint(join(out, 'start'));
    assert.deepEqual(
      [
        start.extra.kind,
        start.extra.starTasks,
        start.extra.starSolvedUnaided,
        start.extra.starSolvedWithHint,
        start.extra.starKept,
        start.extra.starSftSteps,
      ],
      ['start', 6, unaided, hinted, kept, 2],
    );
  }));

test('STaR refusals before the run: a hint without a round, a round on per-role policies, a hint file that is not one conversation', () =>
  withTempDir(async (dir) => {
    const star = { starTasks: 0, starSamples: 4, starSteps: 12, starBatchSize: 8, starLearningRate: 1e-3 };
    await assert.rejects(
      checkStarOptions({ ...star, starHint: 'hint.jsonl' } as never),
      /^InvalidArgumentError: --star-hint is the hint of a STaR round: pass --star-tasks <n> too/,
    );
    await assert.rejects(
      checkStarOptions({ ...star, starTasks: 4, policies: 'per-role' } as never),
      /--star-tasks runs one policy; --policies per-role trains a policy per role/,
    );
    const twoConversations = join(dir, 'two.jsonl');
    await writeFile(twoConversations, `${hintTurns}\n${hintTurns}\n`);
    const result = await runCli([
      'train',
      ...tinyTrainFlags({ 'star-tasks': 4, 'star-hint': twoConversations, store: join(dir, 'runs.db') }),
    ]);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--star-hint .*two\.jsonl: holds 2 conversations; a hint is one/);
  }));
