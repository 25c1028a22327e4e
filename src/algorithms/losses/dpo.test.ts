import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { assertAllClose, assertClose, assertGradientMatches, randomMask, randomSequences } from '../gradient-check.ts';
import { dpoLossTypes, dpoPairLoss, type PreferencePair } from './dpo.ts';

// chosen seq0: Σ(logπ − logπ_ref) over mask [0,1,1] = (−1 + 1.5) + (−2 + 2.5) = 1
// rejected seq1: −3 − (−2) = −1          → h = 2
const base = {
  logprobs: [[-9, -1, -2], [-3]],
  refLogprobs: [[0, -1.5, -2.5], [-2]],
  lossMask: [[0, 1, 1], [1]],
  pairs: [{ chosen: 0, rejected: 1 }],
};

describe('dpoPairLoss', () => {
  it('sigmoid: −log σ(β·h) with β 0.1', () => {
    // −log σ(0.2) = log(1 + e^−0.2) = 0.5981388693; dℓ/dh = −0.1·σ(−0.2) = −0.0450166003
    const { loss, gradLogprobs, metrics } = dpoPairLoss(base);
    assertClose(loss, 0.5981388693, 1e-9);
    assertAllClose(at(gradLogprobs, 0), [0, -0.0450166003, -0.0450166003], 1e-9);
    assertAllClose(at(gradLogprobs, 1), [0.0450166003], 1e-9);
    assertClose(metrics.rewards_chosen, 0.1);
    assertClose(metrics.rewards_rejected, -0.1);
    assertClose(metrics.reward_accuracy, 1);
    assertClose(metrics.reward_margin, 0.2);
  });

  it('ipo: (h − 1/(2β))²', () => {
    // (2 − 5)² = 9; dℓ/dh = 2·(2 − 5) = −6
    const { loss, gradLogprobs } = dpoPairLoss({ ...base, lossType: 'ipo' });
    assertClose(loss, 9);
    assertAllClose(at(gradLogprobs, 0), [0, -6, -6]);
    assertAllClose(at(gradLogprobs, 1), [6]);
  });

  for (const lossType of dpoLossTypes) {
    it(`${lossType}: gradient matches finite differences, with a sequence in two pairs`, () => {
      const rng = new Rng(19);
      const lengths = [5, 4, 6, 3];
      const lossMask = randomMask(rng, lengths);
      const logprobs = randomSequences(rng, lengths, () => -2 * rng.next());
      const refLogprobs = logprobs.map((seq) => seq.map((x) => x + 0.3 * rng.normal()));
      const pairs: PreferencePair[] = [
        { chosen: 0, rejected: 1 },
        { chosen: 2, rejected: 3 },
        { chosen: 0, rejected: 3 },
      ];
      const options = { refLogprobs, lossMask, pairs, lossType, beta: 0.5 };
      const { gradLogprobs } = dpoPairLoss({ ...options, logprobs });
      assertGradientMatches(lossType, (x) => dpoPairLoss({ ...options, logprobs: x }).loss, logprobs, gradLogprobs);
    });
  }

  it('rejects an out-of-range pair index', () => {
    assert.throws(() => dpoPairLoss({ ...base, pairs: [{ chosen: 0, rejected: 2 }] }), InvalidArgumentError);
  });
});
