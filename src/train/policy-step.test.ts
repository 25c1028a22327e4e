/**
 * The trainers run on the `TrainablePolicy` contract alone: a policy without the built-in fused
 * `trainStep` (a thin wrapper exposing only the contract methods of a `BuiltinPolicy`) trains to
 * the same result as the fused path, and an algorithm the backend cannot run is refused up front.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UnsupportedCapabilityError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import type { PolicyCapabilities, TrainablePolicy } from '../policy/types.ts';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { runRl, type RlConfigInput } from './rl.ts';
import { runSft } from './sft.ts';

/** Only the contract: no `trainStep`, no `values`; the capabilities can be narrowed. */
function contractOnly(inner: BuiltinPolicy, capabilities: Partial<PolicyCapabilities> = {}): TrainablePolicy {
  return {
    backend: 'contract-only',
    capabilities: { ...inner.capabilities, valueHead: false, ...capabilities },
    tokenizer: inner.tokenizer,
    contextWindow: inner.contextWindow,
    generate: (request) => inner.generate(request),
    generateBatch: (requests) => inner.generateBatch(requests),
    logprobs: (batch) => inner.logprobs(batch),
    forwardBackward: (batch, loss) => inner.forwardBackward(batch, loss),
    optimStep: (options) => inner.optimStep(options),
    save: (path, options) => inner.save(path, options),
    saveState: () => inner.saveState(),
    loadState: (state) => inner.loadState(state),
  };
}

function maxRelativeGap(a: Float32Array, b: Float32Array): number {
  let gap = 0;
  for (let i = 0; i < a.length; i++)
    gap = Math.max(gap, Math.abs(at(a, i) - at(b, i)) / Math.max(1, Math.abs(at(a, i))));
  return gap;
}

test('runRl through forwardBackward + optimStep (no fused trainStep) gives the fused result for one iteration', async () => {
  const fixture = await warmStartedBandit({ sftSteps: 40, demonstrations: 32 });
  const start = await fixture.policy.saveState();
  const reference = fixture.referencePolicy;
  // Two minibatches at temperature 0.8 with KL and clipping: every piece of the update is exercised.
  const config: RlConfigInput = {
    algo: 'grpo',
    iterations: 1,
    tasksPerIteration: 4,
    groupSize: 4,
    minibatchSize: 8,
    maxTurns: 1,
    maxNewTokens: 24,
    learningRate: 2e-3,
    klCoef: 0.05,
    maxGradNorm: 0.5,
    temperature: 0.8,
    validateEvery: 0,
    validationEpisodes: 2,
    seed: 4,
  };
  const fused = await BuiltinPolicy.fromState(start);
  const parseStart = await fused.model.hostParams();
  const plain = await BuiltinPolicy.fromState(start);
  const wrapper = contractOnly(plain);
  assert.equal(wrapper.trainStep, undefined);
  const a = await runRl({ policy: fused, reference, env: makeBanditEnv, config });
  const b = await runRl({ policy: wrapper, reference, env: makeBanditEnv, config });
  const [ma, mb] = [at(a.history, 0), at(b.history, 0)];
  assert.ok(ma.trained > 0 && ma.gradNorm > 0 && ma.invalidActionRate < 1, `a real update: ${JSON.stringify(ma)}`);
  assert.equal(mb.trained, ma.trained, 'the same rollout');
  assert.equal(mb.reward, ma.reward);
  for (const key of ['loss', 'pgLoss', 'klToReference', 'gradNorm', 'clipfrac'] as const) {
    assert.ok(
      Math.abs(ma[key] - mb[key]) <= 1e-4 * Math.max(1, Math.abs(ma[key])),
      `${key}: fused ${ma[key]} vs contract ${mb[key]}`,
    );
  }
  assert.equal(fused.model.step, plain.model.step, 'the same number of optimizer steps');
  const [pa, pb] = [await fused.model.hostParams(), await plain.model.hostParams()];
  let gap = 0;
  for (const [name, tensor] of pa) gap = Math.max(gap, maxRelativeGap(tensor.data, pb.get(name)!.data));
  assert.ok(gap < 1e-5, `weights after the iteration differ by ${gap}`);
  const moved = [...pa].some(([name, tensor]) => tensor.data.some((x, i) => x !== parseStart.get(name)!.data[i]));
  assert.ok(moved, 'the iteration moved the weights');
});

test('runSft through the contract alone gives the fused losses', async () => {
  const config = {
    vocabSize: 272,
    hiddenSize: 16,
    numLayers: 1,
    numHeads: 2,
    numKvHeads: 1,
    intermediateSize: 32,
    maxSeqLen: 32,
  };
  const created = await TransformerModel.create(config, { seed: 2 });
  const params = await created.hostParams();
  const train = [
    { tokens: [1, 5, 9, 14, 3, 7], mask: [0, 0, 1, 1, 1, 1] },
    { tokens: [2, 8, 8, 4, 6], mask: [0, 0, 0, 1, 1] },
  ];
  const sftConfig = { steps: 4, batchSize: 2, learningRate: 1e-2, warmupSteps: 0 };
  const fused = await runSft({
    policy: new BuiltinPolicy({ model: await TransformerModel.fromParams(config, params) }),
    train,
    config: sftConfig,
  });
  const plain = await runSft({
    policy: contractOnly(new BuiltinPolicy({ model: await TransformerModel.fromParams(config, params) })),
    train,
    config: sftConfig,
  });
  fused.history.forEach((step, i) => {
    assert.ok(
      Math.abs(step.loss - at(plain.history, i).loss) < 1e-5,
      `step ${i + 1}: fused loss ${step.loss} vs contract ${at(plain.history, i).loss}`,
    );
  });
});

test('an algorithm the backend cannot run is refused before any rollout, naming the backend and the algorithm', async () => {
  const model = await TransformerModel.create(
    {
      vocabSize: 272,
      hiddenSize: 16,
      numLayers: 1,
      numHeads: 2,
      numKvHeads: 1,
      intermediateSize: 32,
      maxSeqLen: 64,
      valueHead: true,
    },
    { seed: 1 },
  );
  let rollouts = 0;
  const policy = contractOnly(new BuiltinPolicy({ model }));
  const counting = {
    ...policy,
    generateBatch: (requests: Parameters<TrainablePolicy['generateBatch']>[0]) => {
      rollouts++;
      return policy.generateBatch(requests);
    },
  };
  const base = {
    iterations: 1,
    tasksPerIteration: 1,
    groupSize: 2,
    maxTurns: 1,
    maxNewTokens: 4,
    validationEpisodes: 1,
  };
  await assert.rejects(
    runRl({ policy: counting, env: makeBanditEnv, config: { ...base, algo: 'ppo' } }),
    (error: unknown) => {
      assert.ok(error instanceof UnsupportedCapabilityError, `got ${String(error)}`);
      assert.equal(error.backend, 'contract-only');
      assert.equal(error.feature, 'valueHead');
      assert.match(
        error.message,
        /algorithm ppo trains a critic \(a value head\): the contract-only backend has no value head; use a critic-free algorithm/,
      );
      return true;
    },
  );
  const noClipping = contractOnly(new BuiltinPolicy({ model }), { gradientClipping: false, entropy: false });
  await assert.rejects(
    runRl({ policy: noClipping, env: makeBanditEnv, config: { ...base, algo: 'grpo' } }),
    /algorithm grpo clips the gradient norm \(maxGradNorm 1\), but the contract-only backend cannot clip; set maxGradNorm 0/,
  );
  await assert.rejects(
    runRl({
      policy: noClipping,
      env: makeBanditEnv,
      config: { ...base, algo: 'grpo', maxGradNorm: 0, entropyCoef: 0.01 },
    }),
    /entropy bonus \(entropyCoef 0.01\), but the contract-only backend cannot train an entropy term/,
  );
  await assert.rejects(
    runSft({ policy: noClipping, train: [{ tokens: [1, 2, 3], mask: [0, 1, 1] }] }),
    /SFT clips the gradient norm/,
  );
  assert.equal(rollouts, 0, 'refused before the first rollout');
  // The built-in model with its value head runs PPO (the capability is there).
  const builtin = new BuiltinPolicy({ model });
  assert.equal(builtin.capabilities.valueHead, true);
  const ran = await runRl({
    policy: builtin,
    env: makeBanditEnv,
    reference: builtin,
    config: { ...base, algo: 'ppo' },
  });
  assert.equal(ran.history.length, 1);
});
