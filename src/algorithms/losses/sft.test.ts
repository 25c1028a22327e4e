import { describe, it } from 'node:test';
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { assertAllClose, assertClose, assertGradientMatches, randomMask, randomSequences } from '../gradient-check.ts';
import { negativeLogLikelihood } from './sft.ts';

describe('negativeLogLikelihood', () => {
  it('is the mean NLL of the masked tokens, with gradient −mask/count', () => {
    // masked log-probs −2, −3, −4 → loss (2 + 3 + 4) / 3 = 3
    const { loss, gradLogprobs } = negativeLogLikelihood({
      logprobs: [[-1, -2, -3], [-4]],
      lossMask: [[0, 1, 1], [1]],
    });
    assertClose(loss, 3);
    assertAllClose(at(gradLogprobs, 0), [0, -1 / 3, -1 / 3]);
    assertAllClose(at(gradLogprobs, 1), [-1 / 3]);
  });

  it('gradient matches finite differences', () => {
    const rng = new Rng(17);
    const lengths = [5, 3];
    const lossMask = randomMask(rng, lengths);
    const logprobs = randomSequences(rng, lengths, () => -3 * rng.next());
    const { gradLogprobs } = negativeLogLikelihood({ logprobs, lossMask });
    assertGradientMatches('sft', (x) => negativeLogLikelihood({ logprobs: x, lossMask }).loss, logprobs, gradLogprobs);
  });
});
