import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { lossAggModes } from '../aggregation.ts';
import { assertAllClose, assertClose, assertGradientMatches, randomMask, randomSequences } from '../gradient-check.ts';
import { gspoLoss } from './gspo.ts';

describe('gspoLoss', () => {
  it('matches hand-computed values', () => {
    // Both sequences: log ratios [0.1, 0.3] → mean 0.2, s = e^0.2 = 1.2214027582; ε = 0.2.
    // seq0, A = +1: max(−1.2214, −1.2) = −1.2 (clipped, grad 0)
    // seq1, A = −1: max(1.2214, 1.2) = 1.2214 (unclipped), per-token grad −A·s·w, w = 1/(2·2)
    // seq-mean-token-mean: (−1.2 + 1.2214027582) / 2 = 0.0107013791
    const s = Math.exp(0.2);
    const { loss, gradLogprobs, metrics } = gspoLoss({
      logprobs: [
        [0, 0.1, 0.3],
        [0.1, 0.3],
      ],
      oldLogprobs: [
        [5, 0, 0],
        [0, 0],
      ],
      advantages: [
        [0, 1, 1],
        [-1, -1],
      ],
      lossMask: [
        [0, 1, 1],
        [1, 1],
      ],
    });
    assertClose(loss, (-1.2 + s) / 2);
    assertAllClose(at(gradLogprobs, 0), [0, 0, 0]);
    assertAllClose(at(gradLogprobs, 1), [s / 4, s / 4]);
    assertClose(metrics.clipfrac, 0.5);
    assertClose(metrics.ratio_mean, s);
  });

  it('clamps the log sequence ratio at 10 with zero gradient beyond', () => {
    const { loss, gradLogprobs } = gspoLoss({
      logprobs: [[12, 12]],
      oldLogprobs: [[0, 0]],
      advantages: [[-1, -1]],
      lossMask: [[1, 1]],
    });
    assertClose(loss, Math.exp(10));
    assertAllClose(at(gradLogprobs, 0), [0, 0]);
  });
});

describe('gspoLoss: gradients and the clip branch', () => {
  it('gradient matches finite differences of the sequence-level loss (advantages constant per sequence)', () => {
    const rng = new Rng(5);
    const lengths = [6, 4, 9, 5, 7];
    const mask = randomMask(rng, lengths);
    const old = randomSequences(rng, lengths, () => -3 * rng.next());
    // A spread of drifts so that some sequences are clipped and some are not.
    const current = old.map((seq, i) => seq.map((x) => x + 0.15 * (i - 2) + 0.3 * rng.normal()));
    const advantage = lengths.map((length) => {
      const a = rng.normal();
      return new Float64Array(length).fill(a);
    });
    for (const mode of lossAggModes) {
      const options = {
        oldLogprobs: old,
        advantages: advantage,
        lossMask: mask,
        lossAggMode: mode,
        lossScaleFactor: 16,
      };
      const { gradLogprobs, metrics } = gspoLoss({ ...options, logprobs: current });
      assert.ok(metrics.clipfrac > 0 && metrics.clipfrac < 1, 'both branches exercised');
      assertGradientMatches(mode, (x) => gspoLoss({ ...options, logprobs: x }).loss, current, gradLogprobs);
    }
  });

  it('the clip branch is taken only with the sequence ratio outside [1 − ε_low, 1 + ε_high], where its gradient is 0', () => {
    // One-token sequences with ratios 0.50, 0.51, … 1.50, each with A = +1 and A = −1.
    const sweep = Array.from({ length: 101 }, (_, i) => 0.5 + i / 100).flatMap((r) => [r, r]);
    const advantages = sweep.map((_, i) => [i % 2 === 0 ? 1 : -1]);
    const logprobs = sweep.map((r) => [Math.log(r)]);
    const lossMask = sweep.map(() => [1]);
    const { tokenLosses, gradLogprobs } = gspoLoss({
      logprobs,
      oldLogprobs: sweep.map(() => [0]),
      advantages,
      lossMask,
    });
    let clippedSequences = 0;
    sweep.forEach((_, i) => {
      const ratio = Math.exp(at(at(logprobs, i), 0));
      const advantage = at(at(advantages, i), 0);
      if (at(at(tokenLosses, i), 0) > -advantage * ratio) {
        clippedSequences++;
        assert.ok(ratio < 0.8 || ratio > 1.2, `sequence ${i}: clipped at ratio ${ratio}`);
        assert.equal(at(gradLogprobs, i)[0], 0);
      } else assertClose(at(at(gradLogprobs, i), 0), (-advantage * ratio) / sweep.length);
    });
    assert.ok(clippedSequences > 0);
  });
});
