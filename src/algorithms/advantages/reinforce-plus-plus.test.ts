import { describe, it } from 'node:test';
import { at } from '../../core/indexing.ts';
import { assertAllClose, assertClose } from '../gradient-check.ts';
import { reinforcePlusPlusAdvantages } from './reinforce-plus-plus.ts';
import { whiten } from './whiten.ts';

describe('reinforcePlusPlusAdvantages', () => {
  it('discounts per sequence, then whitens over the batch', () => {
    // seq0: rewards [0,0,1], γ 0.5 → returns [0.25, 0.5, 1]; seq1: mask [0,1], reward 2 → [0, 2]
    const { returns, advantages } = reinforcePlusPlusAdvantages({
      tokenRewards: [
        [0, 0, 1],
        [0, 2],
      ],
      lossMask: [
        [1, 1, 1],
        [0, 1],
      ],
      gamma: 0.5,
    });
    assertAllClose(at(returns, 0), [0.25, 0.5, 1]);
    assertAllClose(at(returns, 1), [0, 2]);
    // masked tokens 0.25, 0.5, 1, 2: mean 0.9375; squared deviations
    // 0.47265625 + 0.19140625 + 0.00390625 + 1.12890625 = 1.796875; unbiased variance /3
    const scale = 1 / Math.sqrt(1.796875 / 3 + 1e-8);
    assertAllClose(at(advantages, 0), [(0.25 - 0.9375) * scale, (0.5 - 0.9375) * scale, (1 - 0.9375) * scale]);
    assertAllClose(at(advantages, 1), [0, (2 - 0.9375) * scale]);
  });

  it('resets at the end of each sequence and skips observation tokens', () => {
    // seq0: [0, obs(reward 7 ignored), 1], γ 0.5 → [0.5, 0, 1]; seq1 starts from 0 again.
    const { returns } = reinforcePlusPlusAdvantages({
      tokenRewards: [[0, 7, 1], [4]],
      lossMask: [[1, 0, 1], [1]],
      gamma: 0.5,
    });
    assertAllClose(at(returns, 0), [0.5, 0, 1]);
    assertAllClose(at(returns, 1), [4]);
  });

  it('whitened tokens have mean 0 and unbiased variance ≈ 1', () => {
    const whitened = whiten([[1, 2, 3, 10]], [[1, 1, 1, 1]]);
    const xs = Array.from(at(whitened, 0));
    const mean = xs.reduce((a, b) => a + b, 0) / 4;
    assertClose(mean, 0);
    assertClose(xs.reduce((a, x) => a + x * x, 0) / 3, 1, 1e-6);
  });
});
