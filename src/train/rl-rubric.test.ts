import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Trajectory } from '../core/types.ts';
import { envReward, type EpisodeContext, reward, rubric } from '../rewards/index.ts';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { type IterationMetrics, iterationSeeds, runRl, type TrainingWarning } from './rl.ts';

test('runRl({ rubric }): components per trajectory and per iteration; a failing component takes its group out of the update, counted, never 0', async () => {
  const { policy, referencePolicy } = await warmStartedBandit({ sftSteps: 20, demonstrations: 16 });
  const config = {
    algo: 'grpo' as const,
    iterations: 1,
    tasksPerIteration: 3,
    groupSize: 2,
    maxTurns: 1,
    maxNewTokens: 8,
    validateEvery: 0,
    validationEpisodes: 2,
    seed: 4,
  };
  const [failingSeed] = iterationSeeds(config.seed, 1, config.tasksPerIteration);
  const prompts: string[] = [];
  const short = reward<EpisodeContext>(
    'short',
    (c) => {
      prompts.push(c.prompt);
      return c.trajectory.turns.every((t) => t.end - t.start <= 4) ? 1 : 0;
    },
    { kind: 'shaping' },
  );
  const flaky = reward<EpisodeContext>('flaky', (c) => {
    if (c.trajectory.seed === failingSeed) throw new RangeError('judge down');
    return 0.5;
  });
  let generated: readonly Trajectory[] = [];
  let trained: readonly Trajectory[] = [];
  const warnings: TrainingWarning[] = [];
  const { history } = await runRl({
    policy,
    reference: referencePolicy,
    env: makeBanditEnv,
    config,
    rubric: rubric([envReward, short, flaky], { envReward: 1, short: 0.25, flaky: 2 }),
    onTrajectories: (trajectories) => {
      generated = trajectories;
    },
    onAdvantages: (trajectories) => {
      trained = trajectories;
    },
    onWarning: (warning) => void warnings.push(warning),
  });
  assert.equal(generated.length, 6);
  assert.ok(
    prompts.every((p) => p.length > 0),
    'the rubric sees the first observation',
  );
  for (const t of generated) {
    assert.deepEqual(
      // The rubric's components (beside the bandit's own, which are kept).
      Object.keys(t.rewardComponents ?? {})
        .filter((name) => ['envReward', 'flaky', 'short'].includes(name))
        .sort(),
      t.seed === failingSeed ? ['envReward', 'short'] : ['envReward', 'flaky', 'short'],
    );
    if (t.seed === failingSeed) {
      assert.equal(t.rewardFailures?.flaky, 'RangeError: judge down');
      continue;
    }
    const c = t.rewardComponents ?? {};
    const total = (c.envReward ?? 0) + 0.25 * (c.short ?? 0) + 2 * (c.flaky ?? 0);
    assert.ok(Math.abs(t.totalReward - total) < 1e-12);
    assert.ok(Math.abs(t.tokenRewards.reduce((a, b) => a + b, 0) - total) < 1e-9, 'token rewards sum to the total');
  }
  assert.ok(trained.length > 0 && trained.every((t) => t.seed !== failingSeed), 'the failed group is not trained on');
  const metrics = history[0] as IterationMetrics;
  assert.equal(metrics.scalars?.rewardFailures, 2);
  assert.equal(metrics.scalars?.['reward/flaky/failures'], 2);
  assert.equal(metrics.scalars?.['reward/flaky'], 0.5);
  assert.equal(metrics.scalars?.['reward/short/failures'], 0);
  assert.ok(Number.isFinite(metrics.scalars?.['reward/envReward']));
  assert.ok(
    warnings.some((w) => w.kind === 'reward-failures' && /2 episodes could not be scored \(flaky 2\)/.test(w.message)),
  );
});
