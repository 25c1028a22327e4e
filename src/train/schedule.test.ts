import { test } from 'node:test';
import assert from 'node:assert/strict';
import { learningRateAt } from './schedule.ts';

test('warm-up rises linearly, cosine decays to the floor', () => {
  const options = { peak: 1, totalSteps: 110, warmupSteps: 10, minRatio: 0.1 };
  assert.equal(learningRateAt(5, options), 0.5);
  assert.equal(learningRateAt(10, options), 1);
  assert.ok(Math.abs(learningRateAt(60, options) - 0.55) < 1e-12); // halfway: 0.1 + 0.9·0.5
  assert.ok(Math.abs(learningRateAt(110, options) - 0.1) < 1e-12);
  assert.ok(Math.abs(learningRateAt(500, options) - 0.1) < 1e-12);
});
