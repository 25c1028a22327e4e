import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { offPolicyReference as reference } from './fixtures/off-policy-reference.ts';
import { assertAllClose, assertClose } from './gradient-check.ts';
import {
  correctionActive,
  offPolicyCorrectionField,
  offPolicyCorrectionSchema,
  offPolicyWeights,
  type OffPolicyWeightOptions,
} from './off-policy-correction.ts';
import { rlLoss, rlLossConfigSchema, rlLossTerms } from './rl-loss.ts';

const { inputs } = reference;

function weightsFor(name: string) {
  const expected = reference.corrections[name];
  assert.ok(expected, `reference case ${name}`);
  const result = offPolicyWeights({
    method: expected.method,
    ...expected.options,
    behaviourLogprobs: inputs.behaviourLogprobs,
    trainerLogprobs: inputs.trainerLogprobs,
    lossMask: inputs.lossMask,
  });
  return { expected, result };
}

describe('offPolicyWeights against the PyTorch reference (verl mismatch_helper)', () => {
  for (const name of Object.keys(reference.corrections)) {
    it(`${name}: weights, corrected mask and metrics`, () => {
      const { expected, result } = weightsFor(name);
      expected.weights.forEach((row, i) => {
        // Off the corrected mask the weight is never applied; on it, it must equal the reference.
        const applied = at(result.weights, i).map((w, t) => w * at(at(result.lossMask, i), t));
        const kept = row.map((w, t) => w * at(at(expected.lossMask, i), t));
        assertAllClose(applied, kept, 1e-12, `${name} weights[${i}]`);
        assertAllClose(at(result.lossMask, i), at(expected.lossMask, i), 0, `${name} lossMask[${i}]`);
      });
      for (const [key, value] of Object.entries(expected.metrics))
        assertClose(result.metrics[key as keyof typeof result.metrics], value, 1e-12, `${name} ${key}`);
    });
  }

  it('the reference exercises every branch: truncation, token and sequence rejections, kept sequences', () => {
    assert.ok(weightsFor('tis').result.metrics.truncatedFraction > 0);
    assert.ok(weightsFor('mis-token').result.metrics.maskedFraction > 0);
    const sequence = weightsFor('mis-sequence').result;
    const kept = sequence.lossMask.filter((row) => row.some((m) => m > 0)).length;
    assert.ok(kept > 0 && kept < sequence.lossMask.length, `${kept} of ${sequence.lossMask.length} sequences kept`);
  });
});

describe('the corrected policy loss against the PyTorch reference', () => {
  for (const [name, losses] of Object.entries(reference.weighted)) {
    for (const policyLoss of ['ppo-clip', 'cispo'] as const) {
      it(`${policyLoss} × ${name} weights over the corrected mask: loss and gradient`, () => {
        const { result } = weightsFor(name);
        const config = rlLossConfigSchema.parse(
          policyLoss === 'cispo' ? { policyLoss, clipRatioLow: 1, clipRatioHigh: 4 } : { policyLoss },
        );
        const terms = rlLossTerms(
          {
            oldLogprobs: inputs.trainerLogprobs,
            advantages: inputs.advantages,
            lossMask: result.lossMask,
            importanceWeights: result.weights,
          },
          { logprobs: inputs.currentLogprobs },
          config,
        );
        const expected = losses[policyLoss];
        assertClose(terms.loss, expected.loss, 1e-12, `${policyLoss} ${name} loss`);
        for (const [i, row] of expected.gradLogprobs.entries())
          assertAllClose(at(terms.gradLogprobs, i), row, 1e-10, `${policyLoss} ${name} grad[${i}]`);
      });
    }
  }

  it('gspo keeps its seq-mean-token-mean under weights: a constant weight of 2 doubles loss and gradient', () => {
    const batch = { oldLogprobs: inputs.trainerLogprobs, advantages: inputs.advantages, lossMask: inputs.lossMask };
    const config = rlLossConfigSchema.parse({ policyLoss: 'gspo', lossAggMode: 'token-mean' });
    const plain = rlLossTerms(batch, { logprobs: inputs.currentLogprobs }, config);
    const twos = inputs.lossMask.map((row) => row.map(() => 2));
    const weighted = rlLossTerms({ ...batch, importanceWeights: twos }, { logprobs: inputs.currentLogprobs }, config);
    assertClose(weighted.loss, 2 * plain.loss, 1e-14);
    for (const [i, row] of plain.gradLogprobs.entries())
      assertAllClose(
        at(weighted.gradLogprobs, i),
        Array.from(row, (g) => 2 * g),
        1e-14,
      );
  });

  it('rlLoss refuses importance weights that do not match the loss mask', () => {
    const batch = { oldLogprobs: [[0, 0]], advantages: [[1, 1]], lossMask: [[0, 1]] };
    assert.throws(() => rlLoss({ ...batch, importanceWeights: [[1]] }), InvalidArgumentError);
  });

  it('weights of 1 leave the loss and its gradient exactly as without weights', () => {
    const batch = { oldLogprobs: inputs.trainerLogprobs, advantages: inputs.advantages, lossMask: inputs.lossMask };
    const config = rlLossConfigSchema.parse({});
    const plain = rlLossTerms(batch, { logprobs: inputs.currentLogprobs }, config);
    const ones = inputs.lossMask.map((row) => row.map(() => 1));
    const weighted = rlLossTerms({ ...batch, importanceWeights: ones }, { logprobs: inputs.currentLogprobs }, config);
    assert.equal(weighted.loss, plain.loss);
    assert.deepEqual(weighted.gradLogprobs, plain.gradLogprobs);
  });
});

describe('correctionActive: when an update corrects', () => {
  const same = {};
  const other = { samplerMatchesTrainer: false };
  it("'auto' is off for the same engine at the same version, tis for another engine or a stale trajectory", () => {
    assert.equal(correctionActive({ mode: 'auto' }, same), null);
    assert.equal(correctionActive({ mode: 'auto' }, { samplerMatchesTrainer: true }, 0), null);
    assert.equal(correctionActive({ mode: 'auto' }, other), 'tis');
    assert.equal(correctionActive({ mode: 'auto' }, same, 1), 'tis');
  });
  it("'off' never corrects; a named method always does", () => {
    assert.equal(correctionActive({ mode: 'off' }, other, 3), null);
    for (const mode of ['tis', 'mis-token', 'mis-sequence'] as const)
      assert.equal(correctionActive({ mode }, same, 0), mode);
  });
});

describe('offPolicyWeights: hostile input', () => {
  const base: OffPolicyWeightOptions = {
    method: 'tis',
    cap: 2,
    low: 0.5,
    high: 2,
    sequenceRatio: 'product',
    behaviourLogprobs: [[0, -1, -2]],
    trainerLogprobs: [[0, -1, -2]],
    lossMask: [[0, 1, 1]],
  };
  it('a non-finite log-prob on a policy token is refused, naming the token; off the mask it is ignored', () => {
    assert.throws(
      () => offPolicyWeights({ ...base, behaviourLogprobs: [[0, Number.NaN, -2]] }),
      (error: unknown) => error instanceof InvalidArgumentError && /sequence 0 token 1/.test(error.message),
    );
    const ignored = offPolicyWeights({ ...base, behaviourLogprobs: [[Number.NaN, -1, -2]] });
    assert.deepEqual([...at(ignored.weights, 0)], [0, 1, 1]);
  });
  it('shapes must match the loss mask', () => {
    assert.throws(() => offPolicyWeights({ ...base, trainerLogprobs: [[0, -1]] }), InvalidArgumentError);
  });
  it('an enormous log ratio stays finite: truncated to C under tis, rejected under mis', () => {
    const huge = { ...base, trainerLogprobs: [[0, 500, -2]] };
    const tis = offPolicyWeights(huge);
    assert.deepEqual([...at(tis.weights, 0)], [0, 2, 1]);
    assertClose(tis.metrics.maxAbsLogprobDelta, 501);
    const mis = offPolicyWeights({ ...huge, method: 'mis-token' });
    assert.deepEqual([...at(mis.lossMask, 0)], [0, 0, 1]);
    assert.ok(Number.isFinite(at(at(mis.weights, 0), 1)));
    const sequence = offPolicyWeights({ ...huge, method: 'mis-sequence' });
    assert.deepEqual([...at(sequence.lossMask, 0)], [0, 0, 0]);
    assert.equal(sequence.metrics.weightMean, 0, 'nothing kept');
  });
  it('the trainer key takes a mode alone (the command line) or the object, and defaults every field', () => {
    const defaults = offPolicyCorrectionSchema.parse({});
    assert.deepEqual(offPolicyCorrectionField.parse('mis-token'), { ...defaults, mode: 'mis-token' });
    assert.deepEqual(offPolicyCorrectionField.parse({ mode: 'tis', cap: 3 }), { ...defaults, mode: 'tis', cap: 3 });
    assert.deepEqual(offPolicyCorrectionField.parse(undefined), defaults);
    assert.throws(() => offPolicyCorrectionField.parse('importance'));
    assert.throws(() => offPolicyCorrectionField.parse({ low: 3 }), /low must be below/);
  });

  it('the config schema refuses low ≥ high and a non-positive cap, naming the fields', () => {
    assert.throws(() => offPolicyCorrectionSchema.parse({ low: 2, high: 2 }), /low must be below/);
    assert.throws(() => offPolicyCorrectionSchema.parse({ cap: 0 }));
    assert.throws(() => offPolicyCorrectionSchema.parse({ mode: 'is' }));
    assert.deepEqual(offPolicyCorrectionSchema.parse({}), {
      mode: 'auto',
      cap: 2,
      low: 0.5,
      high: 2,
      sequenceRatio: 'product',
    });
  });
});
