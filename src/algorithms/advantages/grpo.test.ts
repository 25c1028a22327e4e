import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { assertAllClose, assertClose } from '../gradient-check.ts';
import { grpoAdvantages } from './grpo.ts';

// Group "a": scores 1, 0, 0 (reward on the last token) → mean 1/3,
// unbiased std = sqrt(((2/3)² + 2·(1/3)²) / 2) = sqrt(1/3). Group "b" has one member, score 2.
const tokenRewards = [
  [0, 0, 1],
  [0, 0],
  [0, 0, 0],
  [0, 2],
];
const lossMask = [
  [0, 1, 1],
  [0, 1],
  [1, 1, 1],
  [0, 1],
];
const groupIds = ['a', 'a', 'a', 'b'];

describe('grpoAdvantages', () => {
  it('normalises by the unbiased group std (GRPO)', () => {
    const { sequenceAdvantages, advantages, scores } = grpoAdvantages({ tokenRewards, lossMask, groupIds });
    assert.deepEqual(scores, [1, 0, 0, 2]);
    const std = Math.sqrt(1 / 3);
    assertClose(at(sequenceAdvantages, 0), 2 / 3 / (std + 1e-6)); // ≈ 1.1547
    assertClose(at(sequenceAdvantages, 1), -1 / 3 / (std + 1e-6)); // ≈ −0.5774
    assertAllClose(at(advantages, 0), [0, at(sequenceAdvantages, 0), at(sequenceAdvantages, 0)]); // broadcast over the mask
    assertAllClose(at(advantages, 2), [
      at(sequenceAdvantages, 2),
      at(sequenceAdvantages, 2),
      at(sequenceAdvantages, 2),
    ]);
  });

  it('subtracts the mean only with normalizeByStd false (Dr. GRPO)', () => {
    const { sequenceAdvantages } = grpoAdvantages({ tokenRewards, lossMask, groupIds, normalizeByStd: false });
    assertAllClose(sequenceAdvantages, [2 / 3, -1 / 3, -1 / 3, 2]);
  });

  it('a group of one gets mean 0 and std 1 (verl)', () => {
    const { sequenceAdvantages } = grpoAdvantages({ tokenRewards, lossMask, groupIds });
    assertClose(at(sequenceAdvantages, 3), 2 / (1 + 1e-6));
  });

  it('a group whose rewards do not vary gets zero advantages', () => {
    const { sequenceAdvantages } = grpoAdvantages({ tokenRewards: [[1], [1]], lossMask: [[1], [1]], groupIds: [0, 0] });
    assertAllClose(sequenceAdvantages, [0, 0]);
  });

  it('rejects a groupIds list of the wrong length', () => {
    assert.throws(() => grpoAdvantages({ tokenRewards, lossMask, groupIds: ['a'] }), InvalidArgumentError);
  });
});
