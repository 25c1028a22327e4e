import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../core/index.ts';
import { SPLIT_SIZE, splitOfSeed, splitSeed, splitSeeds, splits } from './split.ts';

test('split seeds are disjoint ranges below 2^32, and map back to their split', () => {
  const seen = new Map<number, string>();
  for (const split of splits) {
    for (const index of [0, 1, 2, 1000, SPLIT_SIZE - 1]) {
      const seed = splitSeed(split, index);
      assert.ok(!seen.has(seed), `${split} ${index} collides with ${seen.get(seed)}`);
      seen.set(seed, split);
      assert.equal(splitOfSeed(seed), split);
      assert.ok(seed < 2 ** 32);
    }
  }
  assert.equal(splitSeed('train', SPLIT_SIZE - 1) + 1, splitSeed('validation', 0));
  assert.equal(splitSeed('validation', SPLIT_SIZE - 1) + 1, splitSeed('test', 0));
  assert.deepEqual(splitSeeds('test', 3, 5), [2 * SPLIT_SIZE + 5, 2 * SPLIT_SIZE + 6, 2 * SPLIT_SIZE + 7]);
});

test('split seed arguments are checked', () => {
  assert.throws(() => splitSeed('train', -1), InvalidArgumentError);
  assert.throws(() => splitSeed('train', SPLIT_SIZE), InvalidArgumentError);
  assert.throws(() => splitSeed('dev' as never, 0), /allowed: train, validation, test/);
  assert.throws(() => splitOfSeed(3 * SPLIT_SIZE), InvalidArgumentError);
});
