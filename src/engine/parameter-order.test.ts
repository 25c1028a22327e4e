import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rlLoss } from '../algorithms/index.ts';
import type { HostParams } from '../model/config.ts';
import { TransformerModel } from './transformer-model.ts';
import { parseSafetensors, serializeSafetensors, toFloat32 } from '../model/safetensors.ts';

const config = {
  vocabSize: 272,
  hiddenSize: 64,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 128,
  maxSeqLen: 64,
};
const sequences = [
  [1, 2, 3, 4, 5, 6, 7, 8],
  [9, 10, 11, 12, 13, 14],
];
const lossMask = sequences.map((s) => s.map((_, t) => (t > 2 ? 1 : 0)));
const advantages = lossMask.map((mask, i) => mask.map((m) => m * (i === 0 ? -1 : 1)));
const maxGradNorm = 0.01;

/** Through safetensors, which stores tensors sorted by name (not the model's order). */
function roundTrip(params: HostParams): HostParams {
  const tensors = parseSafetensors(serializeSafetensors(params)).tensors;
  return new Map([...tensors].map(([name, tensor]) => [name, { shape: tensor.shape, data: toFloat32(tensor) }]));
}

async function clippedStep(model: TransformerModel): Promise<number> {
  const current = await model.score(sequences);
  const loss = rlLoss({ oldLogprobs: current.logprobs, advantages, lossMask });
  return (await model.trainStep(sequences, loss, { learningRate: 1e-2, maxGradNorm })).gradNorm;
}

test('parameter order: a model restored from safetensors (sorted names) trains bit for bit like the original, with clipping active', async () => {
  const original = await TransformerModel.create(config, { seed: 1 });
  await clippedStep(original); // non-zero AdamW moments to restore
  const optimizer = await original.optimizerState();
  const restored = await TransformerModel.fromParams(config, roundTrip(await original.hostParams()));
  restored.loadOptimizerState({ step: optimizer.step, m: roundTrip(optimizer.m), v: roundTrip(optimizer.v) });

  for (let step = 0; step < 6; step++) {
    const expected = await clippedStep(original);
    const actual = await clippedStep(restored);
    assert.ok(expected > maxGradNorm, `step ${step}: gradient norm ${expected} is clipped`);
    assert.equal(actual, expected, `step ${step}: global gradient norm`);
  }
  const a = await original.hostParams();
  const b = await restored.hostParams();
  for (const [name, tensor] of a) assert.deepEqual(b.get(name)!.data, tensor.data, `parameter ${name}`);
});
