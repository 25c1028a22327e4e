import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../core/indexing.ts';
import { rewardMonitor } from '../rewards/monitor/index.ts';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { runRl, type TrainingWarning } from './rl.ts';

const config = {
  algo: 'grpo' as const,
  iterations: 3,
  tasksPerIteration: 2,
  groupSize: 2,
  maxTurns: 1,
  maxNewTokens: 8,
  validateEvery: 0,
  validationEpisodes: 2,
  seed: 1,
};
// Any real entropy is under this floor: entropy-collapse fires in every iteration.
const firesAlways = { entropyCollapse: { floor: 1e9, baselineIterations: 2 } };

test('runRl with a monitor: warn records monitor/* and warns each iteration; stop ends the run after the first, saying why', async () => {
  const { policy, referencePolicy } = await warmStartedBandit({ sftSteps: 20, demonstrations: 16 });
  const warnings: TrainingWarning[] = [];
  const warned = await runRl({
    policy,
    reference: referencePolicy,
    env: makeBanditEnv,
    config,
    monitor: rewardMonitor({ config: { mode: 'warn', ...firesAlways } }),
    onWarning: (warning) => void warnings.push(warning),
  });
  assert.equal(warned.history.length, 3);
  assert.equal(warned.stopReason, undefined);
  const hacking = warnings.filter((w) => w.kind === 'reward-hacking');
  assert.deepEqual(
    hacking.map((w) => w.iteration),
    [1, 2, 3],
  );
  assert.match(
    at(hacking, 0).message,
    /^iteration 1: reward hacking\? entropy-collapse: mean token entropy [\d.]+ nats/,
  );
  const scalars = at(warned.history, 2).scalars ?? {};
  assert.equal(scalars['monitor/entropy-collapse/fired'], 1);
  assert.equal(scalars['monitor/answer-leakage/fired'], 0);
  assert.ok(
    Number.isFinite(scalars['monitor/entropy-collapse']),
    'iteration 3: entropy over the mean of the first two',
  );

  const committed: number[] = [];
  const stopped = await runRl({
    policy,
    reference: referencePolicy,
    env: makeBanditEnv,
    config,
    monitor: rewardMonitor({ config: { mode: 'stop', ...firesAlways } }),
    onWarning: () => {},
    onIteration: (metrics) => void committed.push(metrics.iteration),
  });
  assert.deepEqual(committed, [1], 'the iteration that fired is committed, then the run ends');
  assert.equal(stopped.history.length, 1);
  assert.match(stopped.stopReason ?? '', /reward-hacking monitor \(mode stop\) saw entropy-collapse in iteration 1/);
});

for (const loop of ['synchronous', 'asynchronous (k = 1)'] as const)
  test(`${loop} runRl hands the monitor each episode's first observation (answer leakage through the prompt is visible to it)`, async () => {
    const { policy, referencePolicy } = await warmStartedBandit({ sftSteps: 10, demonstrations: 16 });
    const loopConfig = loop === 'synchronous' ? {} : { async: { maxStaleness: 1 } };
    const inner = rewardMonitor({ config: { mode: 'warn' } });
    const prompts: (string | undefined)[] = [];
    const firstObservation = (await makeBanditEnv().reset({ seed: 0 })).text;
    await runRl({
      policy,
      reference: referencePolicy,
      env: makeBanditEnv,
      config: { ...config, ...loopConfig, iterations: 1 },
      monitor: {
        mode: inner.mode,
        observe: (input) => {
          prompts.push(...input.episodes.map((e) => e.prompt));
          return inner.observe(input);
        },
      },
    });
    assert.equal(prompts.length, config.tasksPerIteration * config.groupSize);
    assert.ok(
      prompts.every((p) => typeof p === 'string' && p.length > 0),
      'every episode carries its first observation',
    );
    assert.ok(
      firstObservation.length > 0 && prompts.every((p) => p?.split('\n')[0] === firstObservation.split('\n')[0]),
    );
  });
