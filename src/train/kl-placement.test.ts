/**
 * KL to the reference has one place per preset (`kl.placement`: loss or reward) and one weight
 * (`kl.coef`, 0 = off), `klCoef` sets only that weight, and the metrics keep KL to the reference (`klToReference`) apart from the
 * policy's drift from its sampler (`ppoKl`, `approxKl`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { at } from '../core/indexing.ts';
import type { Trajectory } from '../core/types.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { activeKl, klInRewardOf, lossConfig } from './algorithm-presets.ts';
import { makeBanditEnv } from './bandit-test-fixture.ts';
import { effectivePreset, rlConfigSchema, runRl, type RlConfigInput } from './rl.ts';

const presetOf = (input: RlConfigInput) => effectivePreset(rlConfigSchema.parse(input));
const tinyModel = (seed: number) =>
  TransformerModel.create(
    { vocabSize: 300, hiddenSize: 16, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 32, maxSeqLen: 160 },
    { seed },
  );
const config: RlConfigInput = {
  iterations: 1,
  tasksPerIteration: 2,
  groupSize: 2,
  minibatchSize: 8,
  maxTurns: 1,
  maxNewTokens: 6,
  validateEvery: 0,
  seed: 1,
};

test('each preset places KL in the loss or in the reward, coefficient 0 = off; klCoef sets only the coefficient', () => {
  assert.deepEqual(presetOf({ algo: 'grpo' }).kl, { placement: 'loss', estimator: 'k3', coef: 0.001 });
  assert.deepEqual(presetOf({ algo: 'rloo' }).kl, { placement: 'reward', estimator: 'k1', coef: 0.001 });
  assert.deepEqual(presetOf({ algo: 'dapo' }).kl, { placement: 'loss', estimator: 'k3', coef: 0 });
  assert.equal(activeKl(presetOf({ algo: 'dapo' })), null, 'coefficient 0: no KL');
  assert.deepEqual(presetOf({ algo: 'grpo', klCoef: 0.05 }).kl, { placement: 'loss', estimator: 'k3', coef: 0.05 });
  assert.deepEqual(presetOf({ algo: 'reinforce++', klCoef: 0.05 }).kl, {
    placement: 'reward',
    estimator: 'k2',
    coef: 0.05,
  });
  assert.deepEqual(
    presetOf({ algo: 'dapo', klCoef: 0.05 }).kl,
    { placement: 'loss', estimator: 'k3', coef: 0.05 },
    'a preset without KL turns on its k3 loss term',
  );
  assert.deepEqual(presetOf({ algo: 'ppo', klCoef: 0 }).kl, { placement: 'reward', estimator: 'k1', coef: 0 });
  assert.equal(activeKl(presetOf({ algo: 'ppo', klCoef: 0 })), null, 'klCoef 0 turns KL off');
  assert.equal(klInRewardOf(presetOf({ algo: 'ppo', klCoef: 0 })), null, 'no KL in the reward at coefficient 0');
  // The loss config carries the KL term only for placement 'loss'.
  assert.deepEqual(lossConfig(presetOf({ algo: 'grpo', klCoef: 0.05 })), {
    ...presetOf({ algo: 'grpo' }).loss,
    useKlLoss: true,
    klLossCoef: 0.05,
    klLossType: 'k3',
  });
  assert.equal(lossConfig(presetOf({ algo: 'rloo' })).useKlLoss, false);
  assert.equal(lossConfig(presetOf({ algo: 'grpo', klCoef: 0 })).useKlLoss, false, 'no KL loss term at coefficient 0');
});

test('klCoef 0 needs no reference: grpo trains without one', async () => {
  const policy = new BuiltinPolicy({ model: await tinyModel(2) });
  await assert.rejects(
    runRl({ policy, env: makeBanditEnv, config: { ...config, algo: 'grpo' } }),
    /uses KL to a reference policy \(in the loss\)/,
  );
  const { history } = await runRl({ policy, env: makeBanditEnv, config: { ...config, algo: 'grpo', klCoef: 0 } });
  assert.equal(at(history, 0).klToReference, 0);
  assert.ok(Number.isFinite(at(history, 0).loss));
});

test('klToReference is the KL to the reference in the loss (grpo) or off the rewards (rloo); ppoKl and approxKl are drift, 0 at the first step', async () => {
  const reference = new BuiltinPolicy({ model: await tinyModel(3) });
  const inLoss = at(
    (
      await runRl({
        policy: new BuiltinPolicy({ model: await tinyModel(2) }),
        reference,
        env: makeBanditEnv,
        config: { ...config, algo: 'grpo' },
      })
    ).history,
    0,
  );
  assert.ok(inLoss.klToReference > 1e-3, `k3 to a different model: ${inLoss.klToReference}`);
  assert.ok(
    Math.abs(inLoss.ppoKl) < 1e-4 && Math.abs(inLoss.approxKl) < 1e-4,
    `drift at the first step: ${inLoss.ppoKl}, ${inLoss.approxKl}`,
  );

  let trained: readonly Trajectory[] = [];
  const inReward = at(
    (
      await runRl({
        policy: new BuiltinPolicy({ model: await tinyModel(2) }),
        reference,
        env: makeBanditEnv,
        config: { ...config, algo: 'rloo' },
        onTrajectories: (t) => {
          trained = t;
        },
      })
    ).history,
    0,
  );
  // The batch mean of each trajectory's per-token k1 = old − ref over its generated tokens.
  const refLogprobs = await reference.logprobs({ sequences: trained.map((t) => t.tokens), temperature: 1 });
  const perTrajectory = trained.map((t, i) => {
    const generated = t.lossMask.flatMap((m, j) => (m === 1 ? [at(t.logprobs, j) - at(at(refLogprobs, i), j)] : []));
    return generated.reduce((a, b) => a + b, 0) / generated.length;
  });
  const expected = perTrajectory.reduce((a, b) => a + b, 0) / perTrajectory.length;
  assert.ok(
    Math.abs(inReward.klToReference - expected) < 1e-6,
    `klToReference ${inReward.klToReference} vs ${expected}`,
  );
  assert.ok(Math.abs(inReward.ppoKl) < 1e-4, `drift at the first step: ${inReward.ppoKl}`);
});
