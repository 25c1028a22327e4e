import { describe, it } from 'node:test';
import { at } from '../../core/indexing.ts';
import { assertAllClose } from '../gradient-check.ts';
import { rlooAdvantages } from './rloo.ts';

describe('rlooAdvantages', () => {
  it('is s_i·n/(n−1) − mean·n/(n−1), i.e. s_i minus the mean of the others', () => {
    // group "g": scores 1, 0, 0, 1, n = 4, mean 0.5 → 1·4/3 − 0.5·4/3 = 2/3; 0 − 2/3 = −2/3
    // group "h": one member with score 3 keeps 3
    const { sequenceAdvantages, advantages } = rlooAdvantages({
      tokenRewards: [
        [0, 1],
        [0, 0],
        [0, 0],
        [1, 0],
        [0, 3],
      ],
      lossMask: [
        [0, 1],
        [1, 1],
        [0, 1],
        [1, 1],
        [1, 1],
      ],
      groupIds: ['g', 'g', 'g', 'g', 'h'],
    });
    assertAllClose(sequenceAdvantages, [2 / 3, -2 / 3, -2 / 3, 2 / 3, 3]);
    assertAllClose(at(advantages, 0), [0, 2 / 3]);
    assertAllClose(at(advantages, 4), [3, 3]);
  });
});
