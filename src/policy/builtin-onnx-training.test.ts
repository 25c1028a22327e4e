import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rlLoss } from '../algorithms/index.ts';
import { TransformerModel } from '../model/model.ts';
import { BuiltinPolicy } from './builtin-policy.ts';
import { policyContract } from './contract.ts';
import { at } from '../core/indexing.ts';

/** Tiny random LoRA models; the train step runs on onnxruntime (sampling too in the second contract). */
const config = {
  vocabSize: 272,
  hiddenSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 64,
  maxSeqLen: 128,
};
const lora = { rank: 4, alpha: 8 };
const trainOnOnnx = TransformerModel.create(config, { seed: 2, lora });
const allOnOnnx = TransformerModel.create(config, { seed: 4, lora });

policyContract(
  'builtin LoRA, training on onnx',
  async () => new BuiltinPolicy({ model: await trainOnOnnx, training: 'onnx' }),
  { trainable: true },
);
policyContract(
  'builtin LoRA, sampling, scoring and training on onnx',
  async () => new BuiltinPolicy({ model: await allOnOnnx, inference: 'onnx', training: 'onnx' }),
  { trainable: true },
);

test('builtin LoRA, training on onnx: the same adapters, moments and saved state as training on jax-js; loadState resyncs the ORT trainer', async () => {
  const onnx = new BuiltinPolicy({ model: await TransformerModel.create(config, { seed: 5, lora }), training: 'onnx' });
  const jax = new BuiltinPolicy({ model: await TransformerModel.create(config, { seed: 5, lora }) });
  const sequences = [
    [72, 105, 33, 10, 44, 90, 17],
    [40, 41, 42, 43, 44],
  ];
  const lossMask = sequences.map((s) => s.map((_, t) => (t >= 2 ? 1 : 0)));
  const step = async (policy: BuiltinPolicy) => {
    const oldLogprobs = await policy.logprobs({ sequences, temperature: 0.9 });
    const loss = rlLoss({
      oldLogprobs,
      advantages: sequences.map((s) => s.map((_, t) => (t % 2 ? 0.5 : -0.25))),
      lossMask,
      config: { entropyCoef: 0.01 },
    });
    return policy.trainStep({ sequences, temperature: 0.9 }, loss, { learningRate: 0.05, maxGradNorm: 1 });
  };
  const largest = async () => {
    const [a, b] = [await onnx.model.adapterParams(), await jax.model.adapterParams()];
    let worst = 0;
    for (const [name, t] of a) {
      const other = b.get(name)?.data ?? [];
      t.data.forEach((x, i) => {
        worst = Math.max(worst, Math.abs(x - at(other, i)));
      });
    }
    return worst;
  };
  for (let i = 0; i < 2; i++) {
    const [a, b] = [await step(onnx), await step(jax)];
    assert.ok(Math.abs(a.loss - b.loss) <= 1e-5 + 1e-4 * Math.abs(b.loss), `${a.loss} vs ${b.loss}`);
    assert.equal(a.step, b.step);
  }
  assert.equal(onnx.model.step, 2);
  assert.ok((await largest()) <= 1e-5, `adapters differ by ${await largest()}`);
  const moments = (await onnx.model.optimizerState()).v.get('layers.0.wq.loraB')!.data;
  assert.ok(
    moments.some((x) => x > 0),
    'the moments were written back to the model',
  );
  // A state from elsewhere (jax-js one step further): the ORT trainer must continue from it, not from its own copy.
  await step(jax);
  await onnx.loadState(await jax.saveState());
  await step(onnx);
  await step(jax);
  assert.equal(onnx.model.step, 4);
  assert.ok((await largest()) <= 1e-5, `after loadState the adapters differ by ${await largest()}`);
});

test("training: 'onnx' needs LoRA adapters without dropout (refused by name)", async () => {
  const full = await TransformerModel.create(config, { seed: 1 });
  assert.throws(() => new BuiltinPolicy({ model: full, training: 'onnx' }), /trains LoRA adapters only/);
  const dropout = await TransformerModel.create(config, { seed: 1, lora: { ...lora, dropout: 0.1 } });
  assert.throws(() => new BuiltinPolicy({ model: dropout, training: 'onnx' }), /no adapter dropout/);
});
