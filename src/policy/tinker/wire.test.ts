import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { gradientData, logprobsOfOutput, needsCurrentLogprobs, reportedGradNorm, toDatum } from './wire.ts';

const sequence = [5, 6, 7, 8];

test('a sequence is a Datum shifted by one: input tokens[0..T−1), targets tokens[1..T), index 0 dropped', () => {
  const datum = toDatum(sequence, { weights: [9, 1, 0, 2] });
  assert.deepEqual(datum.model_input, { chunks: [{ type: 'encoded_text', tokens: [5, 6, 7] }] });
  assert.deepEqual(datum.loss_fn_inputs.target_tokens, { data: [6, 7, 8], dtype: 'int64', shape: [3] });
  assert.deepEqual(datum.loss_fn_inputs.weights, { data: [1, 0, 2], dtype: 'float32', shape: [3] });
  assert.throws(() => toDatum([5]), InvalidArgumentError);
  assert.throws(() => toDatum(sequence, { weights: [1, 2] }), InvalidArgumentError);
});

test("'sum' (hosted Tinker), one-signed gradient: cross_entropy with weights −dL/dlogp ≥ 0, no forward needed", () => {
  const grad = [new Float32Array([0, 0, -0.5, -0.25])];
  assert.equal(needsCurrentLogprobs(grad, 'sum'), false);
  const { lossFunction, data } = gradientData([sequence], grad, 'sum');
  assert.equal(lossFunction, 'cross_entropy');
  assert.deepEqual(at(data, 0).loss_fn_inputs.weights!.data, [0, 0.5, 0.25]);
});

/**
 * dLoss/dlogp_t the server applies, for a request, at ratio 1 (logprobs = the current ones), on a
 * server that sums (hosted Tinker) or one that divides each sequence by Σ weights (floored at
 * 1e-9) and the batch by N (SkyRL: `per_token_losses.sum(-1) / max(loss_mask.sum(-1), 1e-9)`).
 */
function appliedGradient(
  lossFunction: string,
  datum: ReturnType<typeof toDatum>,
  server: 'sum' | 'normalising',
  count: number,
): number[] {
  const inputs = datum.loss_fn_inputs;
  const weights = inputs.weights?.data ?? inputs.target_tokens!.data.map(() => 1);
  const norm =
    server === 'sum'
      ? 1
      : Math.max(
          weights.reduce((a, b) => a + b, 0),
          1e-9,
        ) * count;
  if (lossFunction === 'cross_entropy') return weights.map((w) => -w / norm);
  return inputs.advantages!.data.map((a, t) => (-a * (server === 'sum' ? 1 : (weights[t] ?? 0))) / norm);
}

/** applied/true per trained token, over a batch: one positive factor = the true direction. */
function ratios(
  lossFunction: string,
  data: ReturnType<typeof toDatum>[],
  server: 'sum' | 'normalising',
  grad: Float32Array[],
): number[] {
  return data.flatMap((datum, s) =>
    appliedGradient(lossFunction, datum, server, data.length).flatMap((g, t) => {
      const truth = at(grad, s)[t + 1] ?? 0;
      return truth === 0 ? [] : [g / truth];
    }),
  );
}

test('a mixed-sign gradient reaches ANY server in its true direction: importance_sampling at the current log-probs, not signed CE weights', () => {
  // Sequence 0: token 1 up (dL/dlogp < 0, a positive advantage), tokens 2, 3 down more strongly (Σ(−g) < 0); sequence 1: mostly up.
  const grad = [new Float32Array([0, -0.25, 0.5, 0.5]), new Float32Array([0, -0.5, -0.5, 0.25])];
  const current = [new Float32Array([0, -1, -2, -3]), new Float32Array([0, -1, -1, -1])];
  const sequences = [sequence, [1, 2, 3, 4]];
  assert.equal(needsCurrentLogprobs(grad, 'sum'), true);
  assert.throws(() => gradientData(sequences, grad, 'sum'), /needs the current log-probs/);
  const { lossFunction, data } = gradientData(sequences, grad, 'sum', current);
  assert.equal(lossFunction, 'importance_sampling');
  assert.deepEqual(at(data, 0).loss_fn_inputs.advantages!.data, [0.25, -0.5, -0.5]);
  assert.deepEqual(at(data, 0).loss_fn_inputs.logprobs!.data, [-1, -2, -3]);
  for (const server of ['sum', 'normalising'] as const) {
    const found = ratios(lossFunction, data, server, grad);
    assert.ok(
      found.every((ratio) => ratio > 0),
      `${server}: every token moves the way its gradient says`,
    );
    assert.ok(Math.max(...found) / Math.min(...found) < 1 + 1e-6, `${server}: one factor for the whole batch`);
  }
  // Exact on the hosted (summing) server.
  assert.deepEqual(ratios(lossFunction, data, 'sum', grad), [1, 1, 1, 1, 1, 1]);
  // The old encoding (CE weights −g) on a server dividing by max(Σw, 1e-9): sequence 0's Σw < 0 → ×1e9, sequence 1 is drowned out.
  const old = sequences.map((tokens, s) => toDatum(tokens, { weights: at(grad, s).map((g) => (g === 0 ? 0 : -g)) }));
  const oldRatios = ratios('cross_entropy', old, 'normalising', grad);
  assert.ok(Math.max(...oldRatios) / Math.min(...oldRatios) > 1e6, 'the old encoding does not follow the gradient');
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

test("the gradient norm of an optim_step: grad_norm, grad_norm:mean or a vendor-prefixed key (SkyRL's skyrl.ai/grad_norm); NaN when none", () => {
  assert.equal(reportedGradNorm({ grad_norm: 0.5 }), 0.5);
  assert.equal(reportedGradNorm({ 'grad_norm:mean': 0.25 }), 0.25);
  assert.equal(reportedGradNorm({ 'skyrl.ai/grad_norm': 1.5, 'skyrl.ai/learning_rate': 1e-4 }), 1.5);
  assert.ok(Number.isNaN(reportedGradNorm({ 'skyrl.ai/learning_rate': 1e-4 })));
});
