import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { rlLoss } from '../../algorithms/rl-loss.ts';
import type { TokenLoss } from '../../core/loss.ts';
import type { HostParams, ModelConfigInput } from '../../model/config.ts';
import { TransformerModel } from '../../model/model.ts';
import { OnnxLoraTrainer } from './onnx-lora-trainer.ts';

const tiny: ModelConfigInput = {
  vocabSize: 40,
  hiddenSize: 16,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  intermediateSize: 32,
  maxSeqLen: 32,
  initStd: 0.2,
};
const lora = { rank: 4, alpha: 8 };

function sequences(seed: number, count: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => Array.from({ length: rng.range(4, 12) }, () => rng.int(40)));
}

/** Adapters with B ≠ 0 (PEFT starts B at zero, where ∂A vanishes and the check would be weak). */
function randomAdapters(adapters: HostParams, seed: number): HostParams {
  const rng = new Rng(seed);
  return new Map(
    [...adapters].map(([name, t]) => [
      name,
      { shape: t.shape, data: Float32Array.from(t.data, () => (2 * rng.next() - 1) * 0.3) },
    ]),
  );
}

/** PPO-clip with a KL-to-reference term and an entropy bonus, on seeded advantages and old / reference log-probs near the policy's. */
function ppoLoss(batch: number[][], current: Float32Array[], seed: number): TokenLoss {
  const rng = new Rng(seed);
  const near = () =>
    current.map((row) => Float64Array.from(row, (x, t) => (t === 0 ? 0 : x + 0.3 * (rng.next() - 0.5))));
  return rlLoss({
    oldLogprobs: near(),
    refLogprobs: near(),
    advantages: batch.map((row) => Float64Array.from(row, () => rng.next() - 0.5)),
    lossMask: batch.map((row) => Float64Array.from(row, (_, t) => (t >= 2 ? 1 : 0))),
    config: { entropyCoef: 0.01, useKlLoss: true, klLossCoef: 0.1 },
  });
}

/** max |a − b| / max |a| over every tensor. */
function relativeDifference(a: HostParams, b: HostParams): number {
  let difference = 0;
  let scale = 0;
  for (const [name, tensor] of a) {
    tensor.data.forEach((x, i) => {
      difference = Math.max(difference, Math.abs(x - at(b.get(name)!.data, i)));
      scale = Math.max(scale, Math.abs(x));
    });
  }
  return difference / scale;
}

async function pair(options: { trainTokenBudget?: number } = {}) {
  const model = await TransformerModel.create(tiny, { seed: 3, lora });
  model.setAdapters(randomAdapters(await model.adapterParams(), 7));
  const trainer = OnnxLoraTrainer.create({
    config: model.config,
    params: await model.baseParams(),
    lora: model.lora!,
    adapters: await model.adapterParams(),
    options: { threads: 1, ...options },
  });
  return { model, trainer };
}

test("ONNX LoRA trainer: PPO-clip + KL + entropy loss and adapter gradients equal the jax-js model's (≤ 1e-4 relative), at a temperature", async () => {
  const { model, trainer } = await pair();
  const batch = sequences(1, 6);
  const current = await model.score(batch, { temperature: 0.8 });
  const loss = ppoLoss(batch, current.logprobs, 2);
  const jax = await model.forwardBackward(batch, loss, { temperature: 0.8 });
  const onnx = await trainer.forwardBackward(batch, loss, { temperature: 0.8 });
  assert.ok(Math.abs(onnx.loss - jax.loss) <= 1e-4 * Math.abs(jax.loss), `loss ${onnx.loss} vs ${jax.loss}`);
  assert.equal(onnx.tokens, jax.tokens);
  assert.ok(Math.abs(onnx.metrics.entropy! - jax.metrics.entropy!) <= 1e-4 * jax.metrics.entropy!);
  const difference = relativeDifference(await model.accumulatedGradients(), trainer.accumulatedGradients());
  assert.ok(difference <= 1e-4, `max relative gradient difference ${difference}`);
  await trainer.release();
});

test("ONNX LoRA trainer: three AdamW steps (clipped) give the jax-js model's adapters (≤ 1e-4) and grad norms; micro-batches accumulate exactly", async () => {
  const { model, trainer } = await pair();
  const split = (await pair({ trainTokenBudget: 24 })).trainer;
  const options = { learningRate: 0.01, maxGradNorm: 0.5, weightDecay: 0.01 };
  for (let step = 0; step < 3; step++) {
    const batch = sequences(10 + step, 6);
    const loss = ppoLoss(batch, (await model.score(batch)).logprobs, 20 + step);
    const jax = await model.trainStep(batch, loss, options);
    const onnx = await trainer.trainStep(batch, loss, options);
    const micro = await split.trainStep(batch, loss, options);
    assert.ok(
      Math.abs(onnx.gradNorm - jax.gradNorm) <= 1e-4 * jax.gradNorm,
      `step ${step}: grad norm ${onnx.gradNorm} vs ${jax.gradNorm}`,
    );
    assert.ok(Math.abs(micro.gradNorm - onnx.gradNorm) <= 1e-5 * onnx.gradNorm);
  }
  assert.equal(trainer.step, 3);
  const difference = relativeDifference(await model.adapterParams(), trainer.adapterParams());
  assert.ok(difference <= 1e-4, `max relative adapter difference ${difference}`);
  assert.ok(relativeDifference(trainer.adapterParams(), split.adapterParams()) <= 1e-5);
  // The merged weights are the jax-js model's export.
  assert.ok(relativeDifference(await model.hostParams(), trainer.mergedParams()) <= 1e-4);
  await trainer.release();
  await split.release();
});

test('ONNX LoRA trainer: an SFT-style loss (independent of the policy) reports the surrogate; dropout is refused by name', async () => {
  const { model, trainer } = await pair();
  const batch = sequences(5, 4);
  const nll: TokenLoss = {
    name: 'negative-log-likelihood',
    dependsOnCurrent: false,
    compute: ({ logprobs }) => ({
      loss: 0,
      gradLogprobs: logprobs.map((row) => Float32Array.from(row, (_, t) => (t === 0 ? 0 : -1))),
      metrics: {},
    }),
  };
  const jax = await model.trainStep(batch, nll, { learningRate: 0.05 });
  const onnx = await trainer.trainStep(batch, nll, { learningRate: 0.05 });
  assert.ok(Math.abs(onnx.loss - jax.loss) <= 1e-4 * Math.abs(jax.loss), `${onnx.loss} vs ${jax.loss}`);
  assert.ok(relativeDifference(await model.adapterParams(), trainer.adapterParams()) <= 1e-4);
  await trainer.release();
  assert.throws(
    () =>
      OnnxLoraTrainer.create({
        config: model.config,
        params: new Map(),
        lora: { ...model.lora!, dropout: 0.1 },
        adapters: new Map(),
      }),
    /no adapter dropout/,
  );
});
