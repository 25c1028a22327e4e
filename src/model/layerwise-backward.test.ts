import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../core/rng.ts';
import type { TokenLoss } from '../core/loss.ts';
import { TransformerModel, type ModelOptions } from './model.ts';
import { layerwiseByDefault } from './layerwise-backward.ts';
import { modelConfigSchema, type HostParams, type ModelConfigInput } from './config.ts';
import { at } from '../core/indexing.ts';

const tiny: ModelConfigInput = {
  vocabSize: 40,
  hiddenSize: 16,
  numLayers: 3,
  numHeads: 4,
  numKvHeads: 2,
  intermediateSize: 32,
  maxSeqLen: 32,
  initStd: 0.2,
};

function sequences(seed: number, count: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => Array.from({ length: rng.range(4, 20) }, () => rng.int(40)));
}

/** loss = Σ a·logπ + Σ b·entropy (+ Σ c·value) with fixed random weights: every head gets a gradient. */
function linearLoss(batch: number[][], withValue: boolean, detachValueHead = false): TokenLoss {
  const rng = new Rng(7);
  const weights = () => batch.map((s) => Float32Array.from(s, (_, t) => (t === 0 ? 0 : rng.normal())));
  const [a, b, c] = [weights(), weights(), weights()];
  return {
    name: 'linear',
    dependsOnCurrent: true,
    detachValueHead,
    compute: () => ({ loss: 0, gradLogprobs: a, gradEntropies: b, gradValues: withValue ? c : undefined, metrics: {} }),
  };
}

function assertClose(expected: HostParams, actual: HostParams, what: string): void {
  assert.deepEqual([...actual.keys()], [...expected.keys()], `${what}: the same names in the same order`);
  for (const [name, tensor] of expected) {
    const other = actual.get(name)!.data;
    const scale = tensor.data.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    tensor.data.forEach((x, i) => {
      assert.ok(Math.abs(x - at(other, i)) <= 1e-5 * Math.max(1, scale), `${what} ${name}[${i}]: ${x} vs ${other[i]}`);
    });
  }
}

/** The gradient of one forwardBackward, whole-graph and layer by layer, from equal models. */
async function bothGradients(config: ModelConfigInput, options: ModelOptions, loss: TokenLoss, batch: number[][]) {
  const whole = await TransformerModel.create(config, options);
  const layered = await TransformerModel.create(config, options);
  assert.equal(whole.layerwiseBackward, false, 'a tiny model back-propagates in one call by default');
  layered.layerwiseBackward = true;
  const a = await whole.forwardBackward(batch, loss);
  const b = await layered.forwardBackward(batch, loss);
  assert.ok(Math.abs(a.loss - b.loss) < 1e-5, `loss ${a.loss} vs ${b.loss}`);
  return { whole: await whole.accumulatedGradients(), layered: await layered.accumulatedGradients() };
}

for (const variant of [
  { name: 'tied head, value head', config: { ...tiny, valueHead: true }, withValue: true },
  {
    name: 'untied head, q/k/v bias, Qwen3 q/k norm',
    config: { ...tiny, tieWordEmbeddings: false, attentionBias: true, qkNorm: true },
    withValue: false,
  },
]) {
  test(`layer-by-layer backward gives the whole-graph gradient of every weight (${variant.name})`, async () => {
    const batch = sequences(1, 5);
    const { whole, layered } = await bothGradients(
      variant.config,
      { seed: 4 },
      linearLoss(batch, variant.withValue),
      batch,
    );
    assertClose(whole, layered, variant.name);
  });
}

test('layer-by-layer backward: a detached value head, and micro-batches, match too', async () => {
  const batch = sequences(2, 9);
  const whole = await TransformerModel.create({ ...tiny, valueHead: true }, { seed: 5 });
  const layered = await TransformerModel.create({ ...tiny, valueHead: true }, { seed: 5 });
  layered.layerwiseBackward = true;
  layered.trainTokenBudget = 64; // several compiled calls, accumulated
  const loss = linearLoss(batch, true, true);
  await whole.forwardBackward(batch, loss);
  await layered.forwardBackward(batch, loss);
  assertClose(await whole.accumulatedGradients(), await layered.accumulatedGradients(), 'detached value head');
});

test('layer-by-layer backward of LoRA adapters with dropout equals the whole-graph one, and trainStep steps alike', async () => {
  const batch = sequences(3, 6);
  const options = { seed: 6, lora: { rank: 4, alpha: 8, dropout: 0.25 } };
  const { whole, layered } = await bothGradients(tiny, options, linearLoss(batch, false), batch);
  assert.equal(layered.size, 3 * 7 * 2);
  assertClose(whole, layered, 'LoRA');

  const fused = await TransformerModel.create(tiny, options);
  const stepped = await TransformerModel.create(tiny, options);
  stepped.layerwiseBackward = true;
  for (let step = 0; step < 2; step++) {
    const a = await fused.trainStep(batch, linearLoss(batch, false), { learningRate: 1e-2 });
    const b = await stepped.trainStep(batch, linearLoss(batch, false), { learningRate: 1e-2 });
    assert.ok(Math.abs(a.gradNorm - b.gradNorm) <= 1e-5 * a.gradNorm, `grad norm ${a.gradNorm} vs ${b.gradNorm}`);
  }
  assertClose(await fused.adapterParams(), await stepped.adapterParams(), 'adapters after two steps');
});

test("layerwiseByDefault: on at SmolLM2-135M's shape, off for the byte models", () => {
  const smolLm2 = modelConfigSchema.parse({
    vocabSize: 49152,
    hiddenSize: 576,
    numLayers: 30,
    numHeads: 9,
    numKvHeads: 3,
    intermediateSize: 1536,
  });
  assert.equal(layerwiseByDefault(smolLm2, 256), true);
  assert.equal(layerwiseByDefault(modelConfigSchema.parse({}), 2048), false);
});
