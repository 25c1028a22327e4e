import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import { assertAllClose, assertClose, assertGradientMatches, randomMask, randomSequences } from './gradient-check.ts';
import { klEstimate, klEstimators, klInReward, klPenaltyLoss, type KlEstimator } from './kl.ts';

describe('klEstimate', () => {
  // logp = −1, ref = −1.5 → logp − ref = 0.5
  it('matches hand-computed values', () => {
    assert.deepEqual(klEstimate(-1, -1.5, 'k1'), { value: 0.5, derivative: 1 });
    assert.deepEqual(klEstimate(-1, -1.5, 'abs'), { value: 0.5, derivative: 1 });
    assert.deepEqual(klEstimate(-1.5, -1, 'abs'), { value: 0.5, derivative: -1 });
    assert.deepEqual(klEstimate(-1, -1.5, 'k2'), { value: 0.125, derivative: 0.5 }); // ½·0.5²
    // k3: x = ref − logp = −0.5; eˣ = 0.6065306597; eˣ − x − 1 = 0.1065306597; d = 1 − eˣ
    const k3 = klEstimate(-1, -1.5, 'k3');
    assertClose(k3.value, 0.1065306597, 1e-9);
    assertClose(k3.derivative, 0.3934693403, 1e-9);
    assert.deepEqual(klEstimate(-1, -1.5, 'low_var_kl'), k3);
  });

  it('k3 clamps like verl: x to ±20, then the estimate to 10, with zero gradient there', () => {
    // x = −30 → −20: e⁻²⁰ + 20 − 1 ≈ 19 → 10
    assert.deepEqual(klEstimate(0, -30, 'k3'), { value: 10, derivative: 0 });
    // x = +30 → +20: e²⁰ − 21 → 10
    assert.deepEqual(klEstimate(-30, 0, 'k3'), { value: 10, derivative: 0 });
  });

  it('each derivative matches a finite difference of its value', () => {
    const rng = new Rng(7);
    for (const estimator of klEstimators) {
      for (let k = 0; k < 20; k++) {
        const logp = -3 * rng.next();
        const ref = logp + rng.normal();
        const { derivative } = klEstimate(logp, ref, estimator);
        const h = 1e-6;
        const numeric =
          (klEstimate(logp + h, ref, estimator).value - klEstimate(logp - h, ref, estimator).value) / (2 * h);
        assertClose(derivative, numeric, 1e-6, estimator);
      }
    }
  });

  it('rejects an unknown estimator, listing the allowed ones', () => {
    assert.throws(
      () => klEstimate(0, 0, 'k4' as KlEstimator),
      (error: unknown) => error instanceof InvalidArgumentError && /k1, abs, k2, k3/.test(error.message),
    );
  });
});

describe('klPenaltyLoss', () => {
  it('its gradient matches finite differences for every estimator', () => {
    const rng = new Rng(11);
    const lengths = [5, 3, 7];
    const lossMask = randomMask(rng, lengths);
    const logprobs = randomSequences(rng, lengths, () => -2 * rng.next());
    const refLogprobs = logprobs.map((seq) => seq.map((x) => x + 0.5 * rng.normal()));
    for (const estimator of ['k1', 'k2', 'k3', 'abs'] as const) {
      const value = (x: Float64Array[]): number =>
        klPenaltyLoss({ logprobs: x, refLogprobs, lossMask, estimator, lossAggMode: 'seq-mean-token-mean' }).loss;
      const { gradLogprobs } = klPenaltyLoss({
        logprobs,
        refLogprobs,
        lossMask,
        estimator,
        lossAggMode: 'seq-mean-token-mean',
      });
      assertGradientMatches(estimator, value, logprobs, gradLogprobs);
    }
  });
});

describe('klInReward', () => {
  it('subtracts coef·kl(old, ref) on policy tokens', () => {
    // k1: old − ref = [0.5, −1] → rewards [0 − 0.1·0.5, 1 − 0.1·(−1)] = [−0.05, 1.1]; token 2 is masked out
    const { tokenRewards, kl } = klInReward({
      tokenRewards: [[0, 1, 5]],
      oldLogprobs: [[-1, -2, -3]],
      refLogprobs: [[-1.5, -1, 0]],
      lossMask: [[1, 1, 0]],
      coef: 0.1,
    });
    assertAllClose(at(tokenRewards, 0), [-0.05, 1.1, 5]);
    assertClose(kl, -0.25); // masked mean of [0.5, −1]
  });
});
