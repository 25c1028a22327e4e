import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { at } from './indexing.ts';
import { IndexOutOfRangeError } from './errors.ts';

describe('at', () => {
  it('returns the element at an index inside the array', () => {
    assert.equal(at([10, 20, 30], 0), 10);
    assert.equal(at([10, 20, 30], 2), 30);
    assert.equal(at(new Float32Array([0.5, 1.5]), 1), 1.5);
    assert.equal(at('abc', 1), 'b');
  });

  it('returns a stored undefined instead of throwing (the bound is checked, not the value)', () => {
    const values: (number | undefined)[] = [undefined, 1];
    assert.equal(at(values, 0), undefined);
  });

  it('throws IndexOutOfRangeError naming the array, the index and the length', () => {
    for (const index of [-1, 3, 1.5, Number.NaN]) {
      assert.throws(
        () => at([1, 2, 3], index, 'rewards'),
        (error: unknown) =>
          error instanceof IndexOutOfRangeError &&
          error.code === 'INDEX_OUT_OF_RANGE' &&
          Object.is(error.index, index) &&
          error.length === 3 &&
          error.message.startsWith(`rewards[${index}] is out of range: the length is 3`),
      );
    }
  });
});
