import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { gradientData, logprobsOfOutput, toDatum } from './wire.ts';

const sequence = [5, 6, 7, 8];

test('a sequence is a Datum shifted by one: input tokens[0..T−1), targets tokens[1..T), index 0 dropped', () => {
  const datum = toDatum(sequence, { weights: [9, 1, 0, 2] });
  assert.deepEqual(datum.model_input, { chunks: [{ type: 'encoded_text', tokens: [5, 6, 7] }] });
  assert.deepEqual(datum.loss_fn_inputs.target_tokens, { data: [6, 7, 8], dtype: 'int64', shape: [3] });
  assert.deepEqual(datum.loss_fn_inputs.weights, { data: [1, 0, 2], dtype: 'float32', shape: [3] });
  assert.throws(() => toDatum([5]), InvalidArgumentError);
  assert.throws(() => toDatum(sequence, { weights: [1, 2] }), InvalidArgumentError);
});

test("'sum' (hosted Tinker): cross_entropy with weights −dL/dlogp, so Σ w·(−logp) has the loss's gradient", () => {
  const grad = [new Float32Array([0, 0, -0.5, 0.25])];
  const { lossFunction, data } = gradientData([sequence], grad, 'sum');
  assert.equal(lossFunction, 'cross_entropy');
  assert.deepEqual(at(data, 0).loss_fn_inputs.weights!.data, [0, 0.5, -0.25]);
  // d/dlogp_t of Σ_t w_t·(−logp_t) = −w_t = dL/dlogp_t.
  at(data, 0).loss_fn_inputs.weights!.data.forEach((w, i) => {
    assert.equal(w === 0 ? 0 : -w, at(grad, 0)[i + 1]);
  });
});

test("'sequence-mean' (SkyRL tx): importance_sampling with unit weights, current log-probs, advantages scaled by (T−1)·N", () => {
  const sequences = [sequence, [1, 2, 3]];
  const grad = [new Float32Array([0, 0, -0.5, 0.25]), new Float32Array([0, 1, 0])];
  const current = [new Float32Array([0, -1, -2, -3]), new Float32Array([0, -0.5, -0.25])];
  const { lossFunction, data } = gradientData(sequences, grad, 'sequence-mean', current);
  assert.equal(lossFunction, 'importance_sampling');
  assert.deepEqual(at(data, 0).loss_fn_inputs.weights!.data, [1, 1, 1]);
  assert.deepEqual(at(data, 0).loss_fn_inputs.logprobs!.data, [-1, -2, -3]);
  // Server: per sequence Σ_t −ratio·A_t / (T−1), then ÷ N at optim_step; at ratio 1 the gradient is −A_t/((T−1)·N) = dL/dlogp_t.
  assert.deepEqual(at(data, 0).loss_fn_inputs.advantages!.data, [0, 0.5 * 3 * 2, -0.25 * 3 * 2]);
  assert.deepEqual(at(data, 1).loss_fn_inputs.advantages!.data, [-1 * 2 * 2, 0]);
  assert.throws(() => gradientData(sequences, grad, 'sequence-mean'), InvalidArgumentError);
});

test('forward outputs become agentrl-aligned log-probs (index 0 = 0); a malformed answer is named', () => {
  const answer = { loss_fn_outputs: [{ logprobs: { data: [-1, -2, -3] } }] };
  assert.deepEqual(logprobsOfOutput(answer, [sequence]), [new Float32Array([0, -1, -2, -3])]);
  assert.match(
    String(logprobsOfOutput({ loss_fn_outputs: [{ logprobs: { data: [-1] } }] }, [sequence])),
    /not 3 numbers/,
  );
  assert.match(String(logprobsOfOutput({}, [sequence])), /loss_fn_outputs with 1 entries/);
});
