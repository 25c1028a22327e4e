import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { lossAggModes } from '../aggregation.ts';
import { assertAllClose, assertClose, assertGradientMatches, randomMask, randomSequences } from '../gradient-check.ts';
import { ppoClipLoss } from './ppo-clip.ts';

// old = 0 and logp = log(ratio), so ratio is exact. ε = 0.2, c = 3:
//  A= 1, r=1.5: max(−1.5, −1.2) = −1.2     clipped, grad 0
//  A= 1, r=1.1: max(−1.1, −1.1) = −1.1     unclipped, grad −A·r = −1.1
//  A=−1, r=0.5: max(0.5, 0.8) = 0.8        clipped, grad 0; dual: min(0.8, 3) = 0.8
//  A=−1, r=4  : max(4, 1.2) = 4 → min(4, 3) = 3   dual clip, grad 0
//  A=−2, r=1.1: max(2.2, 2.2) = 2.2        unclipped, grad −A·r = 2.2
// token-mean: (−1.2 − 1.1 + 0.8 + 3 + 2.2) / 5 = 0.74; gradients ÷ 5
const ratios = [1.5, 1.1, 0.5, 4, 1.1];
const advantages = [[1, 1, -1, -1, -2]];
const logprobs = [ratios.map(Math.log)];
const oldLogprobs = [[0, 0, 0, 0, 0]];
const lossMask = [[1, 1, 1, 1, 1]];

describe('ppoClipLoss', () => {
  it('matches hand-computed values with dual clip', () => {
    const { loss, gradLogprobs, tokenLosses, metrics } = ppoClipLoss({ logprobs, oldLogprobs, advantages, lossMask });
    assertAllClose(at(tokenLosses, 0), [-1.2, -1.1, 0.8, 3, 2.2]);
    assertClose(loss, 0.74);
    assertAllClose(at(gradLogprobs, 0), [0, -0.22, 0, 0, 0.44]);
    assertClose(metrics.clipfrac, 0.4); // tokens 0 and 2
    assertClose(metrics.clipfrac_lower, 0.2); // token 3
    const sumLog = ratios.reduce((a, r) => a + Math.log(r), 0);
    assertClose(metrics.ppo_kl, -sumLog / 5);
    assertClose(metrics.approx_kl, ratios.reduce((a, r) => a + r - 1 - Math.log(r), 0) / 5);
    assertClose(metrics.ratio_mean, 8.2 / 5);
  });

  it('without dual clip the A<0, r=4 token costs 4 and has gradient −A·r = 4', () => {
    const { loss, gradLogprobs } = ppoClipLoss({ logprobs, oldLogprobs, advantages, lossMask, clipRatioC: null });
    assertClose(loss, 0.94); // (−1.2 − 1.1 + 0.8 + 4 + 2.2) / 5
    assertClose(at(at(gradLogprobs, 0), 3), 0.8);
  });

  it('clip-higher raises the upper bound (ε_high 0.28: r = 1.5 → 1.28)', () => {
    const { tokenLosses } = ppoClipLoss({ logprobs, oldLogprobs, advantages, lossMask, clipRatioHigh: 0.28 });
    assertClose(at(at(tokenLosses, 0), 0), -1.28);
  });

  it('clamps log ratio at ±20 with zero gradient beyond', () => {
    const { tokenLosses, gradLogprobs } = ppoClipLoss({
      logprobs: [[25]],
      oldLogprobs: [[0]],
      advantages: [[-1]],
      lossMask: [[1]],
      clipRatioC: null,
    });
    assertClose(at(at(tokenLosses, 0), 0), Math.exp(20));
    assert.equal(at(gradLogprobs, 0)[0], 0);
  });
});

describe('ppoClipLoss: gradients, bounds and the clip branch', () => {
  it('gradient matches finite differences under every aggregation mode', () => {
    const rng = new Rng(3);
    const lengths = [6, 4, 9, 5];
    const mask = randomMask(rng, lengths);
    const old = randomSequences(rng, lengths, () => -3 * rng.next());
    const current = old.map((seq) => seq.map((x) => x + 0.4 * rng.normal()));
    const advantage = randomSequences(rng, lengths, () => rng.normal());
    for (const mode of lossAggModes) {
      for (const clipRatioC of [3, 1.2, null]) {
        const options = {
          oldLogprobs: old,
          advantages: advantage,
          lossMask: mask,
          lossAggMode: mode,
          clipRatioC,
          clipRatioHigh: 0.28,
          lossScaleFactor: 16,
        };
        const { gradLogprobs, metrics } = ppoClipLoss({ ...options, logprobs: current });
        assert.ok(metrics.clipfrac > 0 && metrics.clipfrac < 1, 'both branches exercised');
        if (clipRatioC === 1.2) assert.ok(metrics.clipfrac_lower > 0, 'dual clip exercised');
        assertGradientMatches(
          `${mode} c=${clipRatioC}`,
          (x) => ppoClipLoss({ ...options, logprobs: x }).loss,
          current,
          gradLogprobs,
        );
      }
    }
  });

  it('rejects a dual-clip bound ≤ 1', () => {
    assert.throws(
      () => ppoClipLoss({ logprobs, oldLogprobs, advantages, lossMask, clipRatioC: 1 }),
      InvalidArgumentError,
    );
  });

  it('the clip branch is taken only with the ratio outside [1 − ε_low, 1 + ε_high], where its gradient is 0', () => {
    // Ratios 0.50, 0.51, … 1.50 (the bounds 0.8 and 1.28 among them), each with A = +1 and A = −1.
    const sweep = Array.from({ length: 101 }, (_, i) => 0.5 + i / 100);
    const a = [sweep.flatMap((): number[] => [1, -1])];
    const current = [sweep.flatMap((r) => [Math.log(r), Math.log(r)])];
    const mask = [at(a, 0).map(() => 1)];
    const { tokenLosses, gradLogprobs } = ppoClipLoss({
      logprobs: current,
      oldLogprobs: [at(mask, 0).map(() => 0)],
      advantages: a,
      lossMask: mask,
      clipRatioHigh: 0.28,
      clipRatioC: null,
    });
    let clippedTokens = 0;
    at(a, 0).forEach((advantage, t) => {
      const ratio = Math.exp(at(at(current, 0), t));
      if (at(at(tokenLosses, 0), t) > -advantage * ratio) {
        clippedTokens++;
        assert.ok(ratio < 0.8 || ratio > 1.28, `token ${t}: clipped at ratio ${ratio}`);
        assert.equal(at(gradLogprobs, 0)[t], 0);
      } else assertClose(at(at(gradLogprobs, 0), t), (-advantage * ratio) / at(a, 0).length);
    });
    assert.ok(clippedTokens > 0);
  });
});
