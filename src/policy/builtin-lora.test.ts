import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import { CheckpointError } from '../core/errors.ts';
import type { TokenLoss } from '../core/loss.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { parseSafetensors } from '../model/safetensors.ts';
import { BuiltinPolicy } from './builtin-policy.ts';

const tiny = {
  vocabSize: 300,
  hiddenSize: 16,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  intermediateSize: 32,
  maxSeqLen: 32,
  initStd: 0.2,
};
const lora = { rank: 4, alpha: 8 };
const rng = new Rng(5);
const sequences = Array.from({ length: 6 }, () => Array.from({ length: 10 }, () => rng.int(263)));
const nll: TokenLoss = {
  name: 'negative-log-likelihood',
  dependsOnCurrent: false,
  compute: ({ logprobs }) => ({
    loss: 0,
    gradLogprobs: logprobs.map((row) => Float32Array.from(row, (_, t) => (t === 0 ? 0 : -1))),
    metrics: {},
  }),
};
const step = (policy: BuiltinPolicy) => policy.trainStep({ sequences }, nll, { learningRate: 0.05 });

test('LoRA saveState holds the adapters and their moments only, and restores onto the same base bit for bit', async () => {
  const policy = new BuiltinPolicy({ model: await TransformerModel.create(tiny, { seed: 2, lora }) });
  await step(policy);
  await step(policy);
  const bytes = await policy.saveState();
  const names = [...parseSafetensors(bytes).tensors.keys()];
  assert.ok(
    names.length > 0 && names.every((name) => /^(adapters|adam\.m|adam\.v)\/layers\.\d+\.\w+\.lora[AB]$/.test(name)),
    names.join(', '),
  );

  const restored = new BuiltinPolicy({ model: await TransformerModel.create(tiny, { seed: 2, lora }) });
  await restored.loadState(bytes);
  assert.deepEqual(await restored.logprobs({ sequences }), await policy.logprobs({ sequences }));
  const next = await step(policy);
  const nextRestored = await step(restored);
  assert.equal(nextRestored.loss, next.loss);
  assert.equal(nextRestored.gradNorm, next.gradNorm);
  assert.deepEqual(await restored.logprobs({ sequences }), await policy.logprobs({ sequences }));

  await assert.rejects(BuiltinPolicy.fromState(bytes), CheckpointError);
  const fromBase = await BuiltinPolicy.fromState(await policy.saveState(), {
    baseParams: await policy.model.baseParams(),
  });
  assert.deepEqual(await fromBase.logprobs({ sequences }), await policy.logprobs({ sequences }));
});

test('a LoRA policy saves merged weights: the checkpoint serves without adapters', async () => {
  const policy = new BuiltinPolicy({ model: await TransformerModel.create(tiny, { seed: 2, lora }) });
  await step(policy);
  const merged = new BuiltinPolicy({ model: await TransformerModel.fromParams(tiny, await policy.model.hostParams()) });
  const a = await policy.logprobs({ sequences });
  const b = await merged.logprobs({ sequences });
  a.forEach((row, i) => {
    row.forEach((x, t) => {
      assert.ok(Math.abs(x - at(at(b, i), t)) <= 1e-5);
    });
  });
});
