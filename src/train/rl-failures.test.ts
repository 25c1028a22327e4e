import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NonFiniteError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { runRl, type TrainingWarning } from './rl.ts';

test('non-finite loss: all-NaN weights stop the run with NonFiniteError before the iteration is committed', async () => {
  const { model, policy, referencePolicy } = await warmStartedBandit({ sftSteps: 20, demonstrations: 16 });
  const params = await model.hostParams();
  for (const tensor of params.values()) tensor.data.fill(NaN);
  model.setParams(params);
  const committed: number[] = [];
  await assert.rejects(
    runRl({
      policy,
      reference: referencePolicy,
      env: makeBanditEnv,
      config: {
        algo: 'grpo',
        iterations: 2,
        tasksPerIteration: 2,
        groupSize: 2,
        maxTurns: 1,
        maxNewTokens: 8,
        validateEvery: 0,
        validationEpisodes: 2,
        seed: 1,
      },
      onIteration: (metrics) => void committed.push(metrics.iteration),
    }),
    (error: unknown) => {
      assert.ok(error instanceof NonFiniteError, `got ${String(error)}`);
      assert.equal(error.iteration, 1);
      assert.equal(error.quantity, 'loss');
      assert.ok(Number.isNaN(error.value));
      assert.match(error.message, /iteration 1: the loss is NaN/);
      return true;
    },
  );
  assert.deepEqual(committed, [], 'onIteration was never called');
});

test('warnings: an iteration that trains on no tokens, and one where every action was invalid, say so', async () => {
  // An untrained model writes no valid answer: every reward is the same format penalty, so DAPO's
  // dynamic sampling drops every group and nothing is left to train on.
  const model = await TransformerModel.create(
    { vocabSize: 272, hiddenSize: 16, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 32, maxSeqLen: 64 },
    { seed: 4 },
  );
  const warnings: TrainingWarning[] = [];
  const result = await runRl({
    policy: new BuiltinPolicy({ model }),
    env: makeBanditEnv,
    config: {
      algo: 'dapo',
      iterations: 1,
      tasksPerIteration: 2,
      groupSize: 2,
      maxGenerationBatches: 2,
      maxTurns: 1,
      maxNewTokens: 8,
      validateEvery: 0,
      validationEpisodes: 2,
      seed: 1,
    },
    onWarning: (warning) => void warnings.push(warning),
  });
  assert.equal(at(result.history, 0).trained, 0);
  assert.equal(at(result.history, 0).trainedTokens, 0);
  assert.equal(at(result.history, 0).invalidActionRate, 1);
  const kinds = warnings.map((w) => w.kind).sort();
  assert.deepEqual(kinds, ['all-actions-invalid', 'dynamic-sampling-short', 'no-trained-tokens']);
  for (const warning of warnings) assert.equal(warning.iteration, 1);
  assert.match(warnings.find((w) => w.kind === 'no-trained-tokens')!.message, /iteration 1 trained on 0 tokens/);
  assert.match(
    warnings.find((w) => w.kind === 'all-actions-invalid')!.message,
    /every action in iteration 1 was invalid/,
  );
});
