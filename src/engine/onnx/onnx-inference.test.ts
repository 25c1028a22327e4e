import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { modelConfigSchema, parameterShapes, type HostParams, type ModelConfigInput } from '../../model/config.ts';
import { generate } from '../generate.ts';
import { loraConfigSchema, loraShapes } from '../../model/lora.ts';
import { TransformerModel } from '../transformer-model.ts';
import { OnnxInference } from './onnx-inference.ts';

const small: ModelConfigInput = {
  vocabSize: 61,
  hiddenSize: 16,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  intermediateSize: 24,
  maxSeqLen: 48,
};

/** Weights with every tensor random (biases, norms and value head included, so each one matters). */
function randomParams(input: ModelConfigInput, seed: number): HostParams {
  const rng = new Rng(seed);
  const params: HostParams = new Map();
  for (const [name, shape] of parameterShapes(modelConfigSchema.parse(input))) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const isNorm = /Norm$/.test(name);
    for (let i = 0; i < data.length; i++) data[i] = (isNorm ? 1 : 0) + (2 * rng.next() - 1) * (isNorm ? 0.3 : 0.5);
    params.set(name, { shape, data });
  }
  return params;
}

function randomSequences(seed: number, lengths: readonly number[], vocab: number): number[][] {
  const rng = new Rng(seed);
  return lengths.map((length) => Array.from({ length }, () => rng.int(vocab)));
}

function maxDifference(a: readonly Float32Array[], b: readonly Float32Array[]): number {
  let worst = 0;
  a.forEach((row, i) => {
    row.forEach((x, t) => {
      worst = Math.max(worst, Math.abs(x - at(at(b, i), t)));
    });
  });
  return worst;
}

async function pair(config: ModelConfigInput, { lora = false, seed = 3 } = {}) {
  const params = randomParams(config, seed);
  if (!lora) return TransformerModel.fromParams(config, params);
  const loraConfig = loraConfigSchema.parse({
    rank: 4,
    alpha: 8,
    targetModules: ['q_proj', 'v_proj', 'o_proj', 'down_proj'],
  });
  const rng = new Rng(seed + 1);
  const adapters: HostParams = new Map();
  for (const [name, shape] of loraShapes(modelConfigSchema.parse(config), loraConfig)) {
    adapters.set(name, {
      shape,
      data: Float32Array.from({ length: at(shape, 0) * at(shape, 1) }, () => (2 * rng.next() - 1) * 0.3),
    }); // B ≠ 0
  }
  return TransformerModel.fromParams(config, params, { lora: loraConfig, adapters });
}

const variants: [string, ModelConfigInput, { lora?: boolean }][] = [
  ['Llama (GQA, tied head, value head)', { ...small, valueHead: true }, {}],
  ['LoRA with non-zero B', small, { lora: true }],
  ['Qwen2 q/k/v biases, untied head', { ...small, attentionBias: true, tieWordEmbeddings: false }, {}],
  ['Qwen3 head size 6 ≠ 16/4 and q/k norms', { ...small, headDimension: 6, qkNorm: true }, {}],
];

for (const [name, config, options] of variants) {
  test(`OnnxInference scoring equals TransformerModel.score to 1e-4: ${name}, right and left padding, temperature 0.7`, async () => {
    const model = await pair(config, options);
    const inference = await OnnxInference.fromModel(model, { threads: 1 });
    const sequences = randomSequences(5, [7, 19, 2, 33, 12], 61);
    const expected = await model.score(sequences, { temperature: 0.7 });
    for (const padding of ['right', 'left'] as const) {
      const actual = await inference.score(sequences, { temperature: 0.7, padding });
      assert.ok(
        maxDifference(actual.logprobs, expected.logprobs) <= 1e-4,
        `${padding}: ${maxDifference(actual.logprobs, expected.logprobs)}`,
      );
      if (expected.values) assert.ok(maxDifference(actual.values!, expected.values) <= 1e-4);
      actual.logprobs.forEach((row, i) => {
        assert.equal(row.length, at(sequences, i).length);
      });
    }
    await inference.release();
  });
}

test('ORT scoring splits runs by the head budget with the same result', async () => {
  const model = await pair(small);
  const sequences = randomSequences(6, [30, 9, 25], 61);
  const whole = await (await OnnxInference.fromModel(model, { threads: 1 })).score(sequences);
  const split = await (
    await OnnxInference.fromModel(model, { threads: 1, headElementBudget: 61 * 7, scoreTokenBudget: 40 })
  ).score(sequences);
  assert.ok(maxDifference(whole.logprobs, split.logprobs) <= 1e-6);
});

test("OnnxInference greedy generation gives generate()'s tokens (left-padded prompts, LoRA); sampled log-probs equal scored ones", async () => {
  const model = await pair({ ...small, attentionBias: true }, { lora: true });
  const inference = await OnnxInference.fromModel(model, { threads: 1 });
  const prompts = randomSequences(7, [3, 11, 1, 6], 61);
  const options = { maxNewTokens: 20, temperature: 0, stopTokens: [5], seed: 1 };
  const expected = await generate(model, prompts, options);
  const actual = await inference.generate(prompts, options);
  assert.deepEqual(
    actual.map((r) => r.tokens),
    expected.map((r) => r.tokens),
  );
  assert.deepEqual(
    actual.map((r) => r.finishReason),
    expected.map((r) => r.finishReason),
  );
  const grouped = await inference.generate(prompts, { ...options, prefillTokenBudget: 11 }); // prefill in row groups of one
  assert.deepEqual(
    grouped.map((r) => r.tokens),
    expected.map((r) => r.tokens),
  );

  const sampled = await inference.generate(prompts, {
    maxNewTokens: 16,
    temperature: 0.8,
    topP: 0.9,
    seed: 4,
    maxTokenId: 50,
  });
  assert.ok(sampled.every((row) => row.tokens.every((t) => t < 50)));
  const scored = await inference.score(
    prompts.map((p, i) => [...p, ...at(sampled, i).tokens]),
    { temperature: 0.8 },
  );
  sampled.forEach((row, i) => {
    row.logprobs.forEach((logprob, k) => {
      assert.ok(Math.abs(logprob - at(at(scored.logprobs, i), at(prompts, i).length + k)) <= 1e-4);
    });
  });
  const modelSampled = await generate(model, prompts, {
    maxNewTokens: 16,
    temperature: 0.8,
    topP: 0.9,
    seed: 4,
    maxTokenId: 50,
  });
  assert.deepEqual(
    sampled.map((r) => r.tokens),
    modelSampled.map((r) => r.tokens),
  );
  await inference.release();
});

test('refresh: new adapters (same session) and new weights change ORT scores to the updated model', async () => {
  const model = await pair(small, { lora: true });
  const inference = await OnnxInference.fromModel(model, { threads: 1 });
  const sequences = randomSequences(8, [10, 14], 61);
  const other = await pair(small, { lora: true, seed: 9 });
  model.setAdapters(await other.adapterParams());
  await inference.refreshFrom(model);
  assert.ok(
    maxDifference((await inference.score(sequences)).logprobs, (await model.score(sequences)).logprobs) <= 1e-4,
  );
  const full = await pair(small);
  const fullInference = await OnnxInference.fromModel(full, { threads: 1 });
  full.setParams(randomParams(small, 11));
  await fullInference.refreshFrom(full);
  assert.ok(
    maxDifference((await fullInference.score(sequences)).logprobs, (await full.score(sequences)).logprobs) <= 1e-4,
  );
});
