import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  callRetryDelayMs,
  futurePollAction,
  retryAfterSeconds,
  shouldRetryResponse,
  transportDelayMs,
} from './backoff.ts';

test("transport backoff is the SDK's: min(0.5·2^n, 10) s shrunk by up to 25 % jitter; a server wait of 0–60 s wins", () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 9].map((retries) => transportDelayMs(retries, 0)),
    [500, 1000, 2000, 4000, 8000, 10_000, 10_000],
  );
  assert.equal(transportDelayMs(0, 1), 375);
  assert.equal(transportDelayMs(3, 0.5), 3500);
  assert.equal(transportDelayMs(0, 0, 3), 3000);
  assert.equal(transportDelayMs(0, 0, 61), 500, 'a wait over 60 s is ignored');
  assert.equal(transportDelayMs(0, 0, 0), 500, 'a zero wait is ignored');
});

test('retried statuses: 408, 409, 429 and 5xx; x-should-retry overrides both ways', () => {
  assert.deepEqual(
    [400, 401, 402, 404, 408, 409, 410, 422, 425, 429, 500, 503].filter((status) => shouldRetryResponse(status, null)),
    [408, 409, 429, 500, 503],
  );
  assert.equal(shouldRetryResponse(400, 'true'), true);
  assert.equal(shouldRetryResponse(503, 'false'), false);
});

test('retry-after-ms, retry-after seconds and an HTTP date are read; nonsense is not', () => {
  assert.equal(retryAfterSeconds(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' })), 1.5);
  assert.equal(retryAfterSeconds(new Headers({ 'retry-after': '2.5' })), 2.5);
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(retryAfterSeconds(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:07 GMT' }), now), 7);
  assert.equal(retryAfterSeconds(new Headers({ 'retry-after': 'soon' })), undefined);
  assert.equal(retryAfterSeconds(new Headers()), undefined);
});

test('call retries wait min(2^k, 30) s', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 40].map(callRetryDelayMs),
    [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000],
  );
});

test("a future poll's reaction to each status, as the SDK's _TransportErrorKind", () => {
  assert.deepEqual(
    [0, 400, 401, 402, 404, 408, 410, 429, 500, 503].map((status) => [status, futurePollAction(status)]),
    [
      [0, 'retry-with-backoff'],
      [400, 'retry-if-budget'],
      [401, 'fatal'],
      [402, 'pause'],
      [404, 'fatal'],
      [408, 'retry'],
      [410, 'resubmit'],
      [429, 'retry-with-backoff'],
      [500, 'retry'],
      [503, 'retry'],
    ],
  );
});
