/**
 * When to retry a Tinker request and how long to wait first. Pure functions (the unit tests pin the
 * schedule). Retried: no answer (timeout, connection refused or reset), 408, 409, 425 (a checkpoint
 * still being written), 429 and 5xx. The wait is `baseMs · 2^(attempt−1)` capped at `maxMs`; a
 * `Retry-After` header (seconds) replaces it, also capped.
 */
export interface BackoffOptions {
  /** First wait. Default 250 ms. */
  baseMs?: number;
  /** Longest wait. Default 10 000 ms. */
  maxMs?: number;
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}

/** Milliseconds to wait after failed attempt `attempt` (1-based). */
export function backoffDelayMs(attempt: number, options: BackoffOptions = {}, retryAfterSeconds?: number): number {
  const { baseMs = 250, maxMs = 10_000 } = options;
  if (retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0)
    return Math.min(maxMs, retryAfterSeconds * 1000);
  return Math.min(maxMs, baseMs * 2 ** (attempt - 1));
}

/**
 * Waits between polls of one future: starts at `firstMs`, grows ×1.5 per poll up to `maxMs` (the
 * server's own long-poll grows the same way, 100 ms → 1 s).
 */
export function pollDelayMs(poll: number, firstMs = 50, maxMs = 1000): number {
  return Math.min(maxMs, firstMs * 1.5 ** poll);
}
