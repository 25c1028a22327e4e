import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { modelConfigSchema, parameterShapes, type HostParams, type ModelConfigInput } from '../../model/config.ts';
import { distinctPrompts } from './onnx-generate.ts';
import { OnnxInference } from './onnx-inference.ts';
import { OnnxSession } from './session.ts';

const config: ModelConfigInput = {
  vocabSize: 53,
  hiddenSize: 16,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  intermediateSize: 24,
  maxSeqLen: 96,
  attentionBias: true,
};

function randomParams(seed: number): HostParams {
  const rng = new Rng(seed);
  const params: HostParams = new Map();
  for (const [name, shape] of parameterShapes(modelConfigSchema.parse(config))) {
    const isNorm = /Norm$/.test(name);
    const data = Float32Array.from(
      { length: shape.reduce((a, b) => a * b, 1) },
      () => (isNorm ? 1 : 0) + (2 * rng.next() - 1) * (isNorm ? 0.3 : 0.6),
    );
    params.set(name, { shape, data });
  }
  return params;
}

const prompts = [
  [3, 9, 4, 17, 2],
  [8, 1],
  [3, 9, 4, 17, 2],
  [40, 41, 42, 43, 44, 45, 46, 47, 48],
  [3, 9, 4, 17, 2],
  [8, 1],
];

test('distinctPrompts: each distinct prompt once, with the rows that share it in row order', () => {
  const { prompts: distinct, rows } = distinctPrompts(prompts);
  assert.deepEqual(distinct, [prompts[0], prompts[1], prompts[3]]);
  assert.deepEqual(rows, [[0, 2, 4], [1, 5], [3]]);
});

test('shared prompts prefilled once and a cache that grows past its first chunk: greedy rows equal each prompt alone, sampled log-probs equal scoring', async () => {
  const inference = await OnnxInference.create({ config, params: randomParams(2), options: { threads: 1 } });
  // 70 new tokens: the cache starts at P + 32 slots and grows twice.
  const greedy = { maxNewTokens: 70, temperature: 0, seed: 1 };
  const together = await inference.generate(prompts, greedy);
  for (const [b, prompt] of prompts.entries()) {
    const [alone] = await inference.generate([prompt], greedy);
    assert.deepEqual(at(together, b).tokens, alone?.tokens, `row ${b}`);
  }
  // Two prefill groups (budget 9 × 2 rows): sharing is per call, not per group.
  const grouped = await inference.generate(prompts, { ...greedy, prefillTokenBudget: 18 });
  assert.deepEqual(
    grouped.map((row) => row.tokens),
    together.map((row) => row.tokens),
  );

  const sampled = await inference.generate(prompts, { maxNewTokens: 70, temperature: 0.9, topP: 0.95, seed: 7 });
  assert.notDeepEqual(at(sampled, 0).tokens, at(sampled, 2).tokens, 'rows sharing a prompt draw their own tokens');
  const scored = await inference.score(
    prompts.map((prompt, b) => [...prompt, ...at(sampled, b).tokens]),
    { temperature: 0.9 },
  );
  sampled.forEach((row, b) => {
    assert.equal(row.tokens.length, 70);
    row.logprobs.forEach((logprob, k) => {
      const expected = at(at(scored.logprobs, b), at(prompts, b).length + k);
      assert.ok(Math.abs(logprob - expected) <= 1e-4, `row ${b} token ${k}: ${logprob} vs ${expected}`);
    });
  });
  await inference.release();
});

test('rows that stop early leave the decode runs: every row equals its prompt generated alone (stop tokens, greedy and sampled log-probs)', async () => {
  const inference = await OnnxInference.create({ config, params: randomParams(5), options: { threads: 1 } });
  const batch = [...prompts, [7, 7, 7], [30, 2, 19, 4]];
  const free = await inference.generate(batch, { maxNewTokens: 24, temperature: 0, seed: 1 });
  // Stop on tokens some rows emit early, so rows finish at different steps and the batch shrinks.
  const stopTokens = [...new Set(free.slice(0, 4).map((row) => at(row.tokens, 2 + (row.tokens.length % 5))))];
  const greedy = { maxNewTokens: 24, temperature: 0, seed: 1, stopTokens };
  // Every graph run goes through OnnxSession.run: a decode run feeds one token per row.
  const run = OnnxSession.prototype.run;
  const decodeRows: number[] = [];
  OnnxSession.prototype.run = function (this: OnnxSession, feeds, fetches) {
    const [rows, length] = feeds.tokens?.shape ?? [];
    if (length === 1 && rows !== undefined) decodeRows.push(rows);
    return run.call(this, feeds, fetches);
  };
  const together = await inference.generate(batch, greedy).finally(() => {
    OnnxSession.prototype.run = run;
  });
  assert.equal(decodeRows[0], batch.length);
  assert.ok(
    decodeRows.some((n) => n < batch.length),
    `decode runs carried ${decodeRows}`,
  );
  const lengths = together.map((row) => row.tokens.length);
  assert.ok(Math.min(...lengths) < 8 && Math.max(...lengths) === 24, `lengths ${lengths}`);
  for (const [b, prompt] of batch.entries()) {
    const [alone] = await inference.generate([prompt], greedy);
    assert.deepEqual(at(together, b).tokens, alone?.tokens, `row ${b}`);
    assert.equal(at(together, b).finishReason, alone?.finishReason);
  }
  const sampled = await inference.generate(batch, { maxNewTokens: 24, temperature: 1, seed: 3, stopTokens });
  const scored = await inference.score(batch.map((prompt, b) => [...prompt, ...at(sampled, b).tokens]));
  sampled.forEach((row, b) => {
    row.logprobs.forEach((logprob, k) => {
      assert.ok(Math.abs(logprob - at(at(scored.logprobs, b), at(batch, b).length + k)) <= 1e-4, `row ${b} token ${k}`);
    });
  });
  await inference.release();
});
