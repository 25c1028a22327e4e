/**
 * When the Tinker SDK (tinker 0.38.0) retries a request and how long it waits first — pure
 * functions, the unit tests pin the schedule against the SDK's source:
 *
 * - transport retries (`_base_client.py`, stainless): a request is retried on no answer, and on
 *   408, 409, 429 and 5xx (an `x-should-retry: true|false` header overrides), at most 10 times
 *   (`DEFAULT_MAX_RETRIES`); the wait is `min(0.5 · 2^n, 10) s · (1 − 0.25·u)`, u ∈ [0,1) the jitter,
 *   n = retries taken, unless `retry-after-ms` / `retry-after` (seconds or an HTTP date) asks for
 *   0 < t ≤ 60 s — then exactly t.
 * - call retries (`InternalClientHolder.execute_with_retries`): once the transport gives up on a
 *   retryable failure, the call is sent again after `min(2^k, 30)` s, k = 0,1,2,…, until 300 s have
 *   passed since the first try; HTTP 402 (billing) pauses 5 s and retries for up to
 *   `billing_exception_max_pause_duration_sec` (client config, default 3600 s).
 * - future polls (`api_future_impl.py`): 408 and 5xx retry at once, 429 and no answer after
 *   `min(2^c, 30)` s (c = consecutive connection failures, reset by any answer), a bare 400 up to 3
 *   times, 410 resubmits the original request, 402 pauses 5 s, anything else fails.
 */

/** Transport-level retries of one request (the SDK's `DEFAULT_MAX_RETRIES`). */
export const transportMaxRetries = 10;
/** Seconds a call is retried (the SDK's `execute_with_retries` MAX_WAIT_TIME). */
export const callRetryWindowMs = 300_000;
/** Wait between billing (402) retries. */
export const billingPauseMs = 5_000;
/** Bare-400 retries of a future poll (`_MAX_BAD_REQUEST_RETRIES`). */
export const futureBadRequestRetries = 3;

/** Statuses the transport retries (absent an `x-should-retry` header). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The transport's decision for an HTTP error answer: the server's `x-should-retry` wins. */
export function shouldRetryResponse(status: number, shouldRetryHeader: string | null): boolean {
  if (shouldRetryHeader === 'true') return true;
  if (shouldRetryHeader === 'false') return false;
  return isRetryableStatus(status);
}

/**
 * Seconds the server asked to wait: `retry-after-ms`, else `retry-after` as seconds or an HTTP
 * date (relative to `nowMs`); undefined when absent or unreadable.
 */
export function retryAfterSeconds(headers: Headers, nowMs = Date.now()): number | undefined {
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && milliseconds.trim() !== '' && Number.isFinite(Number(milliseconds)))
    return Number(milliseconds) / 1000;
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  if (Number.isFinite(Number(value))) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : (date - nowMs) / 1000;
}

/**
 * Milliseconds before transport retry number `retriesTaken + 1`: the server's wait when
 * 0 < t ≤ 60 s, else `min(500 · 2^retriesTaken, 10 000) · (1 − 0.25 · jitter)`.
 */
export function transportDelayMs(retriesTaken: number, jitter: number, serverSeconds?: number): number {
  if (serverSeconds !== undefined && serverSeconds > 0 && serverSeconds <= 60) return serverSeconds * 1000;
  const base = Math.min(500 * 2 ** Math.min(retriesTaken, 1000), 10_000);
  return Math.max(0, base * (1 - 0.25 * jitter));
}

/** Milliseconds before call retry `attempt` (0-based): `min(2^attempt, 30)` s. */
export function callRetryDelayMs(attempt: number): number {
  return Math.min(2 ** Math.min(attempt, 30), 30) * 1000;
}

/** A future poll's reaction to an HTTP error status (the SDK's `_TransportErrorKind`). */
export type FuturePollAction = 'retry' | 'retry-with-backoff' | 'retry-if-budget' | 'resubmit' | 'pause' | 'fatal';

export function futurePollAction(status: number): FuturePollAction {
  if (status === 402) return 'pause';
  if (status === 408 || (status >= 500 && status < 600)) return 'retry';
  if (status === 410) return 'resubmit';
  if (status === 429 || status === 0) return 'retry-with-backoff';
  if (status === 400) return 'retry-if-budget';
  return 'fatal';
}
