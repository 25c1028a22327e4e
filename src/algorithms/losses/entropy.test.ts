import { describe, it } from 'node:test';
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { assertAllClose, assertClose, assertGradientMatches, randomMask, randomSequences } from '../gradient-check.ts';
import { entropyBonus } from './entropy.ts';

describe('entropyBonus', () => {
  it('is −coef · token-mean entropy', () => {
    // masked entropies 1, 2 → mean 1.5; loss −0.01·1.5 = −0.015; grad −0.01/2 per token
    const { loss, gradEntropies, metrics } = entropyBonus({
      entropies: [[0, 1, 2]],
      lossMask: [[0, 1, 1]],
      coef: 0.01,
    });
    assertClose(loss, -0.015);
    assertClose(metrics.entropy, 1.5);
    assertAllClose(at(gradEntropies, 0), [0, -0.005, -0.005]);
  });

  it('gradient matches finite differences', () => {
    const rng = new Rng(13);
    const lengths = [4, 6];
    const lossMask = randomMask(rng, lengths);
    const entropies = randomSequences(rng, lengths, () => 3 * rng.next());
    const options = { lossMask, coef: 0.02, lossAggMode: 'seq-mean-token-sum' as const };
    const { gradEntropies } = entropyBonus({ ...options, entropies });
    assertGradientMatches('entropy', (x) => entropyBonus({ ...options, entropies: x }).loss, entropies, gradEntropies);
  });
});
