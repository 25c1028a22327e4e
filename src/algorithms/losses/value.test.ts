import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { lossAggModes } from '../aggregation.ts';
import { assertAllClose, assertClose, assertGradientMatches, randomMask, randomSequences } from '../gradient-check.ts';
import { valueLoss } from './value.ts';

describe('valueLoss', () => {
  it('matches hand-computed values (ε_v 0.5, V_old 0)', () => {
    // V=1,  R=2:   V_c=0.5:  (1−2)²=1   vs (0.5−2)²=2.25  → ½·2.25 = 1.125, clipped, grad 0
    // V=.2, R=1:   V_c=0.2:  0.64 both                      → 0.32, grad V−R = −0.8
    // V=−1, R=−2:  V_c=−0.5: 1 vs 2.25                      → 1.125, clipped, grad 0
    // V=1,  R=0.2: V_c=0.5:  0.64 vs 0.09                   → 0.32, grad 0.8
    // token-mean: 2.89 / 4 = 0.7225
    const { loss, gradValues, metrics } = valueLoss({
      values: [[1, 0.2, -1, 1]],
      oldValues: [[0, 0, 0, 0]],
      returns: [[2, 1, -2, 0.2]],
      lossMask: [[1, 1, 1, 1]],
    });
    assertClose(loss, 0.7225);
    assertAllClose(at(gradValues, 0), [0, -0.2, 0, 0.2]);
    assertClose(metrics.vf_clipfrac, 0.5);
  });

  it('gradient matches finite differences under every aggregation mode', () => {
    const rng = new Rng(9);
    const lengths = [6, 4, 9];
    const lossMask = randomMask(rng, lengths);
    const oldValues = randomSequences(rng, lengths, () => rng.normal());
    const values = oldValues.map((seq) => seq.map((v) => v + 0.6 * rng.normal()));
    const returns = randomSequences(rng, lengths, () => rng.normal());
    for (const mode of lossAggModes) {
      const options = { oldValues, returns, lossMask, lossAggMode: mode, clipRangeValue: 0.3, lossScaleFactor: 16 };
      const { gradValues, metrics } = valueLoss({ ...options, values });
      assert.ok(metrics.vf_clipfrac > 0 && metrics.vf_clipfrac < 1, 'both branches exercised');
      assertGradientMatches(mode, (x) => valueLoss({ ...options, values: x }).loss, values, gradValues);
    }
  });

  it('the clipped branch is taken only with V outside [V_old − ε_v, V_old + ε_v], where its gradient is 0', () => {
    // V = −1.00, −0.98, … 1.00 around V_old 0 (the bounds ±0.5 among them), returns 1.2 and −0.7.
    const sweep = Array.from({ length: 101 }, (_, i) => -1 + i / 50).flatMap((v) => [v, v]);
    const targets = sweep.map((_, i) => (i % 2 === 0 ? 1.2 : -0.7));
    const { gradValues } = valueLoss({
      values: [sweep],
      oldValues: [sweep.map(() => 0)],
      returns: [targets],
      lossMask: [sweep.map(() => 1)],
    });
    let clippedTokens = 0;
    sweep.forEach((value, t) => {
      const target = at(targets, t);
      const clippedValue = Math.min(0.5, Math.max(-0.5, value));
      if ((clippedValue - target) ** 2 > (value - target) ** 2) {
        clippedTokens++;
        assert.ok(Math.abs(value) > 0.5, `token ${t}: clipped at V ${value}`);
        assert.equal(at(gradValues, 0)[t], 0);
      } else assertClose(at(at(gradValues, 0), t), (value - target) / sweep.length);
    });
    assert.ok(clippedTokens > 0);
  });
});
