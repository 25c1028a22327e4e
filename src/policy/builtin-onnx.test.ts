import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sftLoss } from '../algorithms/index.ts';
import { TransformerModel } from '../model/model.ts';
import { BuiltinPolicy } from './builtin-policy.ts';
import { policyContract } from './contract.ts';
import { at } from '../core/indexing.ts';

/** Tiny random models, shared (compiled functions are cached per model); sampling and scoring run on onnxruntime. */
const config = {
  vocabSize: 272,
  hiddenSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 64,
  maxSeqLen: 128,
};
const fullModel = TransformerModel.create(config, { seed: 1 });
const loraModel = TransformerModel.create(config, { seed: 2, lora: { rank: 4, alpha: 8 } });

policyContract(
  'builtin, inference on onnx',
  async () => new BuiltinPolicy({ model: await fullModel, inference: 'onnx' }),
  { trainable: true },
);
policyContract(
  'builtin LoRA, inference on onnx',
  async () => new BuiltinPolicy({ model: await loraModel, inference: 'onnx' }),
  { trainable: true },
);

test('builtin, inference on onnx: the same samples and log-probs as on jax-js, before and after an optimizer step', async () => {
  const model = await TransformerModel.create(config, { seed: 3, lora: { rank: 4, alpha: 8 } });
  const onnx = new BuiltinPolicy({ model, inference: 'onnx' });
  const jax = new BuiltinPolicy({ model });
  const request = { prompt: [72, 105, 33], maxNewTokens: 12, temperature: 0.9, seed: 5 };
  for (let round = 0; round < 2; round++) {
    const [a, b] = [await onnx.generate(request), await jax.generate(request)];
    assert.deepEqual(a.tokens, b.tokens);
    a.logprobs.forEach((logprob, i) => {
      assert.ok(Math.abs(logprob - at(b.logprobs, i)) <= 1e-4);
    });
    const sequence = [...request.prompt, ...a.tokens];
    await jax.forwardBackward({ sequences: [sequence] }, sftLoss([sequence.map((_, t) => (t >= 3 ? 1 : 0))]));
    await jax.optimStep({ learningRate: 5e-2, maxGradNorm: 0 }); // the ORT copy must follow this step
    const scoredOnnx = at(await onnx.logprobs({ sequences: [sequence] }), 0);
    const scoredJax = at(await jax.logprobs({ sequences: [sequence] }), 0);
    scoredOnnx.forEach((x, t) => {
      assert.ok(Math.abs(x - at(scoredJax, t)) <= 1e-4, `token ${t}: ${x} vs ${scoredJax[t]}`);
    });
  }
});
