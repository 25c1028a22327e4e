import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../../core/indexing.ts';
import { firedAt, readings } from './signal-test-helpers.ts';

test('length-drift: replies growing, the longer ones paid, fires once the early length is known', () => {
  const drifting = readings('length-drift', {
    iterations: 6,
    change: (iteration, options, rng) => {
      if (iteration <= 3) return options;
      const long = rng.next() < 0.5;
      // The longer half is paid (right), the shorter half not; both grow with the iterations.
      return {
        ...options,
        think: 'x'.repeat((long ? 120 : 60) * (iteration - 2)),
        answer: long ? String(options.a + options.b) : 'no',
      };
    },
  });
  assert.deepEqual(firedAt(drifting), [4, 5, 6]);
  assert.ok((at(drifting, 3).statistic ?? 0) > 0.9, `r = ${at(drifting, 3).statistic}`);
  assert.ok((at(drifting, 3).values?.growth ?? 0) > 1.5);
});

test('length-drift: long replies that are not paid more, or paid more but not grown, do not fire', () => {
  const longUnpaid = readings('length-drift', {
    iterations: 6,
    change: (iteration, options) => (iteration <= 3 ? options : { ...options, think: 'x'.repeat(400) }),
  });
  assert.deepEqual(firedAt(longUnpaid), []);
  const paidNotGrown = readings('length-drift', {
    iterations: 6,
    change: (_iteration, options, rng) => {
      const long = rng.next() < 0.5;
      return { ...options, think: 'x'.repeat(long ? 60 : 20), answer: long ? String(options.a + options.b) : 'no' };
    },
  });
  assert.ok((at(paidNotGrown, 5).statistic ?? 0) > 0.5, 'correlated');
  assert.deepEqual(firedAt(paidNotGrown), []);
});
