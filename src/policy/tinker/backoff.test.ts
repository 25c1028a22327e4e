import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffDelayMs, isRetryableStatus, pollDelayMs } from './backoff.ts';

test('backoff doubles from 250 ms and stops at the cap; Retry-After wins, capped', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 8].map((attempt) => backoffDelayMs(attempt)),
    [250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000],
  );
  assert.deepEqual(
    [1, 2, 3].map((attempt) => backoffDelayMs(attempt, { baseMs: 10, maxMs: 25 })),
    [10, 20, 25],
  );
  assert.equal(backoffDelayMs(1, {}, 3), 3000);
  assert.equal(backoffDelayMs(1, {}, 600), 10_000);
});

test('retried statuses: 408, 409, 425, 429 and 5xx; other 4xx fail at once', () => {
  assert.deepEqual(
    [400, 401, 404, 408, 409, 422, 425, 429, 500, 503].filter(isRetryableStatus),
    [408, 409, 425, 429, 500, 503],
  );
});

test('future polls start at 50 ms and grow ×1.5 up to 1 s', () => {
  assert.deepEqual(
    [0, 1, 2, 3].map((poll) => pollDelayMs(poll)),
    [50, 75, 112.5, 168.75],
  );
  assert.equal(pollDelayMs(20), 1000);
});
