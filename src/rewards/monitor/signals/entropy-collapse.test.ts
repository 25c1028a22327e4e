import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../../core/indexing.ts';
import { firedAt, readings } from './signal-test-helpers.ts';

test('entropy-collapse: 2.5 → 0.2 nats (bench:real) fires once the early mean is known; a slow easing does not', () => {
  const collapse = readings('entropy-collapse', {
    iterations: 8,
    entropy: (iteration) => (iteration <= 4 ? 2.5 - 0.05 * iteration : 0.2),
  });
  assert.deepEqual(firedAt(collapse), [5, 6, 7, 8]);
  assert.ok(Math.abs((at(collapse, 4).statistic ?? 0) - 0.2 / 2.4) < 1e-9, 'statistic = entropy / early mean');
  assert.match(at(collapse, 4).message, /0\.200 nats: 8\.3% of its early mean 2\.400/);
  // The healthy tiny frozen-lake run of the README: 0.062 → 0.038 over 40 iterations.
  const easing = readings('entropy-collapse', { iterations: 40, entropy: (i) => 0.062 - 0.0006 * i });
  assert.deepEqual(firedAt(easing), []);
});

test('entropy-collapse: below the absolute floor fires at once, before any baseline; NaN entropy is no evidence', () => {
  const floor = readings('entropy-collapse', { iterations: 2, entropy: () => 0.001 });
  assert.deepEqual(firedAt(floor), [1, 2]);
  assert.equal(at(floor, 0).statistic, undefined);
  const unmeasured = readings('entropy-collapse', { iterations: 5, entropy: () => Number.NaN });
  assert.deepEqual(firedAt(unmeasured), []);
  assert.equal(at(unmeasured, 4).statistic, undefined);
});
