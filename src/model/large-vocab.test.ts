import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TokenLoss } from '../core/loss.ts';
import { TransformerModel } from './model.ts';
import { at } from '../core/indexing.ts';

/**
 * At a real vocabulary (SmolLM2's 49,152 ids) the heads must not build a [V, V] one-hot table:
 * `nn.oneHot` in jax-js 0.1.25 slices rows of `eye(V)`, 9.7 GB at this size, past the 4 GiB
 * wasm32 heap. A narrow model keeps the test fast; only the vocabulary is real.
 */
const largeVocab = {
  vocabSize: 49152,
  hiddenSize: 8,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 16,
  maxSeqLen: 32,
};

test('scoring and a train step at a 49,152-token vocabulary stay inside the wasm heap', async () => {
  const model = await TransformerModel.create(largeVocab, { seed: 1 });
  const sequences = [
    [1, 500, 49151, 7, 30000],
    [2, 3, 4],
  ];
  const scored = await model.score(sequences);
  for (const row of scored.logprobs)
    for (let t = 1; t < row.length; t++) assert.ok(Number.isFinite(at(row, t)) && at(row, t) < 0);
  // Random init at std 0.02 is near-uniform: log-probs sit near −log V.
  assert.ok(Math.abs(at(at(scored.logprobs, 0), 1) + Math.log(49152)) < 0.5);
  const loss: TokenLoss = {
    name: 'negative-log-likelihood',
    dependsOnCurrent: false,
    compute: ({ logprobs }) => ({
      loss: 0,
      gradLogprobs: logprobs.map((row) => Float32Array.from(row, (_, t) => (t === 0 ? 0 : -1))),
      metrics: {},
    }),
  };
  const report = await model.trainStep(sequences, loss, { learningRate: 1e-2 });
  assert.ok(Number.isFinite(report.loss) && report.gradNorm > 0);
});

test('tokensPerCall lowers the token budget only where [tokens, V] logits would pass 2^25 elements', async () => {
  const { tokensPerCall, TRAIN_TOKEN_BUDGET, SCORE_TOKEN_BUDGET, TRAIN_HEAD_ELEMENT_BUDGET } = await import(
    './micro-batches.ts'
  );
  // The byte models (272 ids) keep their budgets: their compiled shapes, and results, are unchanged.
  assert.equal(tokensPerCall(TRAIN_TOKEN_BUDGET, 272), TRAIN_TOKEN_BUDGET);
  assert.equal(tokensPerCall(SCORE_TOKEN_BUDGET, 272), SCORE_TOKEN_BUDGET);
  // SmolLM2: 682 tokens per call, so 2 rows of 256.
  assert.equal(tokensPerCall(SCORE_TOKEN_BUDGET, 49152), 682);
  assert.equal(tokensPerCall(SCORE_TOKEN_BUDGET, 151936), 220);
  // Training calls hold the backward's activations too: one row of 256 at SmolLM2's vocabulary.
  assert.equal(tokensPerCall(TRAIN_TOKEN_BUDGET, 49152, TRAIN_HEAD_ELEMENT_BUDGET), 341);
  assert.equal(tokensPerCall(TRAIN_TOKEN_BUDGET, 272, TRAIN_HEAD_ELEMENT_BUDGET), TRAIN_TOKEN_BUDGET);
});
