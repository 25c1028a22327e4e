import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../../core/indexing.ts';
import { firedAt, readings } from './signal-test-helpers.ts';

test('reward-validation-divergence: train reward rising while validation falls fires once three validations show it', () => {
  const diverging = readings('reward-validation-divergence', {
    iterations: 12,
    // Validated every third iteration: 60% → 50% → 40% → 30% while the train success climbs (the fixture's).
    validation: (iteration) => 0.7 - (0.1 * iteration) / 3,
  });
  assert.deepEqual(firedAt(diverging), [9, 10, 11, 12]);
  assert.ok(Math.abs((at(diverging, 8).statistic ?? 0) - 0.2) < 1e-9, 'fitted fall over iterations 3–9: 20 points');
  assert.match(at(diverging, 8).message, /validation success fell 20\.0%/);
});

test('reward-validation-divergence: both falling, or validation noise under the threshold, does not fire', () => {
  const bothFalling = readings('reward-validation-divergence', {
    iterations: 12,
    change: (iteration, options) => ({ ...options, answer: iteration > 4 ? 'wrong' : options.answer }),
    validation: (iteration) => 0.7 - (0.1 * iteration) / 3,
  });
  assert.deepEqual(firedAt(bothFalling), []);
  const noisy = readings('reward-validation-divergence', {
    iterations: 12,
    validation: (iteration) => (iteration % 2 === 0 ? 0.5 : 0.45),
  });
  assert.deepEqual(firedAt(noisy), []);
});
