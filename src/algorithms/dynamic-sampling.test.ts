import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { filterGroups } from './dynamic-sampling.ts';

// a: rewards 1, 1 (uniform); b: 0, 1 (variance 0.25); c: 0, 0, 1 (variance 2/9 ≈ 0.222)
const groupIds = ['a', 'a', 'b', 'b', 'c', 'c', 'c'];
const rewards = [1, 1, 0, 1, 0, 0, 1];

describe('filterGroups', () => {
  it('drops groups whose rewards do not vary (DAPO)', () => {
    assert.deepEqual(filterGroups({ groupIds, rewards }), {
      kept: [2, 3, 4, 5, 6],
      keptGroups: 2,
      uniformGroups: 1,
      lowVarianceGroups: 0,
    });
  });

  it('keeps the top fraction of groups by reward variance (RAGEN)', () => {
    // ⌈0.5 · 2⌉ = 1 group: b (0.25 > 0.222)
    assert.deepEqual(filterGroups({ groupIds, rewards, keepTopFraction: 0.5 }), {
      kept: [2, 3],
      keptGroups: 1,
      uniformGroups: 1,
      lowVarianceGroups: 1,
    });
  });

  it('keeps a group of one, as verl (no variance to judge it by; its GRPO advantage is its reward, mean 0 and std 1)', () => {
    assert.deepEqual(filterGroups({ groupIds: ['a', 'a', 'solo'], rewards: [1, 1, 1] }), {
      kept: [2],
      keptGroups: 1,
      uniformGroups: 1,
      lowVarianceGroups: 0,
    });
  });

  it('rejects mismatched lengths', () => {
    assert.throws(() => filterGroups({ groupIds, rewards: [1] }), InvalidArgumentError);
  });
});
