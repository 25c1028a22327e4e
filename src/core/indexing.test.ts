import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { at, entry } from './indexing.ts';
import { IndexOutOfRangeError, UnknownNameError } from './errors.ts';

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

describe('entry', () => {
  it("returns the record's own value for a key, a stored undefined included", () => {
    assert.equal(entry({ logits: 1, values: 2 }, 'values'), 2);
    assert.equal(entry<number | undefined>({ logits: undefined }, 'logits'), undefined);
  });

  it('throws UnknownNameError listing the keys there are (inherited names are not keys)', () => {
    for (const key of ['loss', 'constructor']) {
      assert.throws(
        () => entry({ logits: 1, values: 2 }, key, 'run output'),
        (error: unknown) =>
          error instanceof UnknownNameError &&
          error.message === `unknown run output "${key}"; allowed: logits, values` &&
          error.code === 'UNKNOWN_NAME',
      );
    }
  });
});
