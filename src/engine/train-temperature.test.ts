import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sftLoss } from '../algorithms/index.ts';
import { TransformerModel } from './transformer-model.ts';

test('forwardBackward at temperature 0.7 differentiates log_softmax(logits / 0.7), the scorer’s log-probs at that temperature', async () => {
  const model = await TransformerModel.create(
    {
      vocabSize: 40,
      hiddenSize: 16,
      numLayers: 1,
      numHeads: 2,
      numKvHeads: 1,
      intermediateSize: 32,
      maxSeqLen: 32,
      initStd: 0.5,
    },
    { seed: 2 },
  );
  const sequences = [
    [1, 2, 3, 4, 5, 6],
    [7, 8, 9, 10],
  ];
  const lossMask: number[][] = sequences.map((s) => s.map((_, t) => (t > 0 ? 1 : 0)));
  const count = lossMask.flat().reduce((a, b) => a + b, 0);
  const meanNegativeLogprob = (logprobs: Float32Array[]) =>
    -logprobs.reduce((sum, row) => sum + row.reduce((a, b) => a + b, 0), 0) / count;
  const atTemperature = meanNegativeLogprob((await model.score(sequences, { temperature: 0.7 })).logprobs);
  const atOne = meanNegativeLogprob((await model.score(sequences)).logprobs);
  assert.ok(Math.abs(atTemperature - atOne) > 1e-3, 'the two temperatures give different log-probs');
  // The SFT loss is linear in the log-probs, so the value the backward pass returns is Σ g·logπ_T.
  const report = await model.forwardBackward(sequences, sftLoss(lossMask), { temperature: 0.7 });
  model.zeroGradients();
  assert.ok(Math.abs(report.loss - atTemperature) < 1e-5, `surrogate ${report.loss} vs −mean logπ_T ${atTemperature}`);
});
