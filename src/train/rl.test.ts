import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { effectivePreset, rlConfigSchema, runRl } from './rl.ts';
import { at } from '../core/indexing.ts';

for (const algo of ['grpo', 'ppo'] as const) {
  test(`learning smoke test (${algo} on the bandit): loss finite, every parameter moves, reward rises`, async () => {
    const { model, policy, referencePolicy } = await warmStartedBandit({ valueHead: algo === 'ppo' });
    const start = await model.hostParams();
    const result = await runRl({
      policy,
      reference: referencePolicy,
      env: makeBanditEnv,
      config: {
        algo,
        iterations: 10,
        tasksPerIteration: 8,
        groupSize: 8,
        maxTurns: 1,
        maxNewTokens: 24,
        learningRate: 2e-3,
        validateEvery: 0,
        validationEpisodes: 16,
        seed: 3,
      },
    });
    assert.equal(result.history.length, 10);
    for (const m of result.history)
      assert.ok(Number.isFinite(m.loss) && Number.isFinite(m.gradNorm), `iteration ${m.iteration}: loss ${m.loss}`);
    const after = await model.hostParams();
    for (const [name, tensor] of start) {
      const moved = tensor.data.some((x, i) => x !== after.get(name)!.data[i]);
      assert.ok(moved, `parameter ${name} did not move`);
    }
    const early = (at(result.history, 0).success + at(result.history, 1).success) / 2;
    const late = (at(result.history, 8).success + at(result.history, 9).success) / 2;
    assert.ok(late > early + 0.15, `better-arm rate ${early.toFixed(2)} → ${late.toFixed(2)} (iterations 1–2 vs 9–10)`);
  });
}

test('trainer overrides reach the loss: vfCoef and detachValueHead (PPO), left alone when not given', () => {
  const base = effectivePreset(rlConfigSchema.parse({ algo: 'ppo' })).loss;
  assert.equal(base.vfCoef, 0.5);
  assert.equal(base.detachValueHead, undefined);
  const tuned = effectivePreset(rlConfigSchema.parse({ algo: 'ppo', vfCoef: 0.1, detachValueHead: true })).loss;
  assert.equal(tuned.vfCoef, 0.1);
  assert.equal(tuned.detachValueHead, true);
  assert.throws(() => rlConfigSchema.parse({ algo: 'ppo', vfCoef: -1 }));
});

test('temperature 0.7: old, current and reference log-probs are all scored at the rollout temperature (ratio 1, KL 0 before any update)', async () => {
  const { policy, referencePolicy } = await warmStartedBandit({ sftSteps: 40, demonstrations: 32 });
  const result = await runRl({
    policy,
    reference: referencePolicy,
    env: makeBanditEnv,
    // One iteration, one minibatch: the metrics are those of the first step, before any update.
    config: {
      algo: 'grpo',
      iterations: 1,
      tasksPerIteration: 4,
      groupSize: 4,
      minibatchSize: 16,
      maxTurns: 1,
      maxNewTokens: 24,
      temperature: 0.7,
      validateEvery: 0,
      validationEpisodes: 2,
      seed: 3,
    },
  });
  const [first] = result.history;
  assert.ok(first!.trained > 0);
  assert.ok(
    first!.approxKl < 1e-8,
    `KL(old ‖ current) ${first!.approxKl} (the sampler's log-probs vs the scorer's at the same temperature)`,
  );
  assert.equal(first!.clipfrac, 0);
  assert.ok(Math.abs(first!.klToReference) < 1e-6, `KL to the identical reference ${first!.klToReference}`);
});
