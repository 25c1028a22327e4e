import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MetricsRecord } from '../store/types.ts';
import { metricColumns } from './metric-series.ts';

const createdAt = '2025-01-01T00:00:00.000Z';
function records(count: number): MetricsRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    step: i + 1,
    time: new Date(Date.parse(createdAt) + 1000 * (i + 1)).toISOString(),
    values: { reward: i + 1, trainedTokens: 10, ...(i % 2 === 0 ? { validationSuccess: 0.5 } : {}) },
  }));
}

test('metric columns: one array per metric aligned with step, seconds since creation and cumulative tokens', () => {
  const columns = metricColumns(records(3), { createdAt });
  assert.deepEqual(columns.steps, [1, 2, 3]);
  assert.deepEqual(columns.seconds, [1, 2, 3]);
  assert.deepEqual(columns.tokens, [10, 20, 30]);
  assert.deepEqual(columns.values, {
    reward: [1, 2, 3],
    trainedTokens: [10, 10, 10],
    validationSuccess: [0.5, null, 0.5],
  });
  assert.equal(columns.lastStep, 3);
  assert.equal(columns.bucketSize, 1);
});

test('metric columns: after N returns only the later steps, tokens still counted from the first step', () => {
  const columns = metricColumns(records(5), { createdAt, after: 3 });
  assert.deepEqual(columns.steps, [4, 5]);
  assert.deepEqual(columns.tokens, [40, 50]);
  assert.equal(columns.lastStep, 5);
  const none = metricColumns(records(5), { createdAt, after: 5 });
  assert.deepEqual([none.steps, none.lastStep], [[], 5]);
});

test('metric columns: past maxPoints, steps are averaged in equal buckets keeping the last x of each', () => {
  const columns = metricColumns(records(3000), { createdAt, maxPoints: 1000 });
  assert.equal(columns.bucketSize, 3);
  assert.equal(columns.steps.length, 1000);
  assert.deepEqual(columns.steps.slice(0, 2), [3, 6]);
  assert.deepEqual(columns.values.reward!.slice(0, 2), [2, 5]);
  assert.deepEqual(columns.values.validationSuccess!.slice(0, 2), [0.5, 0.5]);
  assert.equal(columns.tokens.at(-1), 30_000);
});

test('metric columns: non-finite values (NaN stored as null) are null, tokens null when no token metric is recorded', () => {
  const columns = metricColumns([{ step: 1, time: createdAt, values: { loss: null as unknown as number } }], {
    createdAt,
  });
  assert.deepEqual(columns.values.loss, [null]);
  assert.deepEqual(columns.tokens, [null]);
});
