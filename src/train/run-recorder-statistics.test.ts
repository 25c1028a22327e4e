import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import type { Trajectory } from '../core/types.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { RunStore } from '../store/run-store.ts';
import type { IterationMetrics } from './rl.ts';
import { RunRecorder } from './run-recorder.ts';

function episode(groupId: string, totalReward: number, generated: number): Trajectory {
  const lossMask = [0, 0, ...new Array(generated).fill(1)];
  return {
    tokens: lossMask.map((_, i) => 65 + i),
    lossMask,
    logprobs: lossMask.map(() => 0),
    tokenRewards: lossMask.map(() => 0),
    turns: [],
    totalReward,
    success: totalReward > 0,
    groupId,
    seed: 0,
    truncated: false,
  };
}

test('run recorder: each iteration also records response length and reward spread within a group, from the sampled episodes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-recorder-'));
  const store = RunStore.open(join(dir, 'agentrl.db'));
  try {
    const run = store.createRun({ command: 'train', seed: 0, gitCommit: null, config: {} });
    const model = await TransformerModel.create(
      { vocabSize: 300, hiddenSize: 16, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 32, maxSeqLen: 32 },
      { seed: 1 },
    );
    const recorder = new RunRecorder({ store, runId: run.id });
    await recorder.hooks().onTrajectories!(
      [episode('a', 1, 4), episode('a', 0, 6), episode('b', 1, 2), episode('b', 1, 8)],
      1,
    );
    const metrics = { iteration: 1, reward: 0.75, success: 0.75 } as IterationMetrics;
    const recorded = await recorder.commit(new BuiltinPolicy({ model }), metrics, {
      iteration: 1,
      rngState: new Rng(1).state(),
    });
    const stored = at(store.metrics(run.id), 0).values;
    assert.deepEqual(
      {
        responseLength: stored.responseLength,
        responseLengthMax: stored.responseLengthMax,
        sampledTokens: stored.sampledTokens,
        rewardStdWithinGroup: stored.rewardStdWithinGroup,
        uniformRewardGroupFraction: stored.uniformRewardGroupFraction,
      },
      {
        responseLength: 5,
        responseLengthMax: 8,
        sampledTokens: 20,
        rewardStdWithinGroup: 0.25,
        uniformRewardGroupFraction: 0.5,
      },
    );
    assert.equal(stored.reward, 0.75);
    assert.deepEqual(recorded, stored, 'commit returns what it recorded (for trackers)');
  } finally {
    store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
