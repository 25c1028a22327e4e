import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { assertAllClose } from '../gradient-check.ts';
import { gae } from './gae.ts';

describe('gae', () => {
  it('matches hand-computed values (γ 0.9, λ 0.8)', () => {
    // t=2: δ = 1 + 0 − 0.7 = 0.3;            A = 0.3
    // t=1: δ = 0 + 0.9·0.7 − 0.6 = 0.03;     A = 0.03 + 0.72·0.3 = 0.246
    // t=0: δ = 0 + 0.9·0.6 − 0.5 = 0.04;     A = 0.04 + 0.72·0.246 = 0.21712
    const { advantages, returns } = gae({
      tokenRewards: [0, 0, 1],
      values: [0.5, 0.6, 0.7],
      lossMask: [1, 1, 1],
      gamma: 0.9,
      lambda: 0.8,
    });
    assertAllClose(advantages, [0.21712, 0.246, 0.3]);
    assertAllClose(returns, [0.71712, 0.846, 1.0]); // A + V
  });

  it('with the verl defaults γ = λ = 1 the advantage is return-to-go minus value', () => {
    const { advantages } = gae({ tokenRewards: [0, 1], values: [0.2, 0.3], lossMask: [1, 1] });
    assertAllClose(advantages, [0.8, 0.7]);
  });

  it('skips observation tokens: inserting them leaves the policy tokens unchanged', () => {
    const plain = gae({
      tokenRewards: [0, 0, 1],
      values: [0.5, 0.6, 0.7],
      lossMask: [1, 1, 1],
      gamma: 0.9,
      lambda: 0.8,
    });
    // Prompt token first, two observation tokens (with reward and value that must be ignored) between turns.
    const interleaved = gae({
      tokenRewards: [3, 0, 5, -2, 0, 1],
      values: [9, 0.5, 8, 7, 0.6, 0.7],
      lossMask: [0, 1, 0, 0, 1, 1],
      gamma: 0.9,
      lambda: 0.8,
    });
    assertAllClose(
      [at(interleaved.advantages, 1), at(interleaved.advantages, 4), at(interleaved.advantages, 5)],
      plain.advantages,
    );
    assertAllClose([at(interleaved.returns, 1), at(interleaved.returns, 4), at(interleaved.returns, 5)], plain.returns);
    assertAllClose(
      [at(interleaved.advantages, 0), at(interleaved.advantages, 2), at(interleaved.advantages, 3)],
      [0, 0, 0],
    );
  });

  it('rejects mismatched lengths and γ outside [0, 1]', () => {
    assert.throws(() => gae({ tokenRewards: [0], values: [0, 0], lossMask: [1, 1] }), InvalidArgumentError);
    assert.throws(() => gae({ tokenRewards: [0], values: [0], lossMask: [1], gamma: 1.5 }), InvalidArgumentError);
  });
});
