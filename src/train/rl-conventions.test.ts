import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rlLossConfigSchema } from '../algorithms/index.ts';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { effectivePreset, rlConfigSchema, runRl } from './rl.ts';

const lossOf = (input: Record<string, unknown>) =>
  rlLossConfigSchema.parse(effectivePreset(rlConfigSchema.parse(input)).loss);

test('Dr. GRPO divides by a constant: the generation budget by default (maxTurns × maxNewTokens, or maxNewTokens per turn), settable', () => {
  assert.equal(lossOf({ algo: 'dr-grpo', maxTurns: 3, maxNewTokens: 24 }).lossScaleFactor, 72);
  assert.equal(
    lossOf({ algo: 'dr-grpo', maxTurns: 3, maxNewTokens: 24, historyTurns: 1 }).lossScaleFactor,
    24,
    'bounded history trains one turn per sample',
  );
  assert.equal(lossOf({ algo: 'dr-grpo', lossScaleFactor: 500 }).lossScaleFactor, 500);
  assert.equal(lossOf({ algo: 'dr-grpo' }).lossAggMode, 'seq-mean-token-sum-norm');
});

test('dual clip: DAPO uses c = 10 (verl recipe), GRPO keeps 3; clipRatioC overrides it, null turns it off', () => {
  assert.equal(lossOf({ algo: 'dapo' }).clipRatioC, 10);
  assert.equal(lossOf({ algo: 'grpo' }).clipRatioC, 3);
  assert.equal(lossOf({ algo: 'dapo', clipRatioC: 5 }).clipRatioC, 5);
  assert.equal(lossOf({ algo: 'grpo', clipRatioC: null }).clipRatioC, null);
  assert.throws(() => rlConfigSchema.parse({ clipRatioC: 1 }));
});

test('DAPO dynamic sampling refills the batch to tasksPerIteration groups whose rewards vary', async () => {
  const { policy } = await warmStartedBandit({ sftSteps: 40, demonstrations: 32 });
  const groupRewards: Map<string, number[]>[] = [];
  const result = await runRl({
    policy,
    env: makeBanditEnv,
    config: {
      algo: 'dapo',
      iterations: 3,
      tasksPerIteration: 4,
      groupSize: 4,
      maxTurns: 1,
      maxNewTokens: 24,
      learningRate: 1e-3,
      validateEvery: 0,
      validationEpisodes: 2,
      seed: 2,
    },
    onAdvantages: (trajectories) => {
      const groups = new Map<string, number[]>();
      for (const t of trajectories) groups.set(t.groupId, [...(groups.get(t.groupId) ?? []), t.totalReward]);
      groupRewards.push(groups);
    },
  });
  assert.ok(
    result.history.some((m) => m.episodes > 16),
    'some iteration generated more than one batch (a uniform group was dropped)',
  );
  for (const m of result.history) assert.equal(m.trained, 16, `iteration ${m.iteration}: 4 groups × 4 trained`);
  for (const groups of groupRewards) {
    assert.equal(groups.size, 4);
    for (const [id, rewards] of groups)
      assert.ok(
        rewards.some((r) => r !== rewards[0]),
        `group ${id} has varying rewards`,
      );
  }
});
