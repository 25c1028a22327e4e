import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../core/indexing.ts';
import type { Trajectory } from '../core/types.ts';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { preferencePairs, runDpo } from './dpo.ts';

const fake = (groupId: string, success: boolean, totalReward: number): Trajectory => ({
  tokens: [1, 2, 3],
  lossMask: [0, 1, 1],
  logprobs: [0, 0, 0],
  tokenRewards: [0, 0, totalReward],
  turns: [],
  totalReward,
  success,
  groupId,
  seed: 0,
  truncated: false,
});

test('preference pairs: successes with failures of the same task, best with worst, none from uniform groups', () => {
  const trajectories = [
    fake('a', true, 1),
    fake('a', false, -0.5),
    fake('a', true, 2),
    fake('a', false, 0),
    fake('b', true, 1),
    fake('b', true, 1),
    fake('c', false, 0),
    fake('d', true, 1),
    fake('d', false, 0),
    fake('d', false, 0),
  ];
  assert.deepEqual(preferencePairs(trajectories), [
    { chosen: 2, rejected: 1 },
    { chosen: 0, rejected: 3 },
    { chosen: 7, rejected: 8 },
  ]);
});

test('online DPO on the bandit raises the better-arm rate', async () => {
  const { policy, referencePolicy } = await warmStartedBandit();
  const result = await runDpo({
    policy,
    reference: referencePolicy,
    env: makeBanditEnv,
    config: {
      iterations: 8,
      tasksPerIteration: 8,
      groupSize: 4,
      maxTurns: 1,
      maxNewTokens: 24,
      learningRate: 1e-3,
      validateEvery: 0,
      validationEpisodes: 16,
      seed: 2,
    },
  });
  assert.ok(result.history.every((m) => m.pairs === 0 || Number.isFinite(m.loss)));
  assert.ok(result.history.some((m) => m.pairs > 0));
  const early = (at(result.history, 0).success + at(result.history, 1).success) / 2;
  const late = (at(result.history, 6).success + at(result.history, 7).success) / 2;
  assert.ok(late > early + 0.15, `better-arm rate ${early.toFixed(2)} → ${late.toFixed(2)}`);
});
