import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TokenLoss } from '../core/loss.ts';
import { TransformerModel } from './transformer-model.ts';
import { at } from '../core/indexing.ts';

/**
 * At a real vocabulary (SmolLM2's 49,152 ids) scoring and training stay finite and near-uniform
 * at init (the head's [tokens, V] logits are the only tensor of that size). A narrow model keeps
 * the test fast; only the vocabulary is real.
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

test('scoring and a train step at a 49,152-token vocabulary', async () => {
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
