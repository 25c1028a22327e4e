/**
 * One JSON request to a Tinker server, with retries, backoff (./backoff.ts) and a per-attempt
 * timeout. Every failure is a `TinkerError` naming the endpoint, the status and the body.
 *
 *   const answer = await requestJson({ baseUrl, method: 'POST', path: '/api/v1/create_session', body, retry });
 */
import { backoffDelayMs, isRetryableStatus, type BackoffOptions } from './backoff.ts';
import { bodyExcerpt, TinkerError } from './tinker-error.ts';

export interface RetryOptions extends BackoffOptions {
  /** Per-attempt timeout. Default 60 000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 5. */
  maxRetries?: number;
  /** Waits between attempts (tests may record them). Default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
}

export interface JsonRequest {
  baseUrl: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  retry?: RetryOptions;
}

export const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function requestJson({
  baseUrl,
  method,
  path,
  body,
  headers = {},
  retry = {},
}: JsonRequest): Promise<unknown> {
  const { timeoutMs = 60_000, maxRetries = 5, sleep = defaultSleep } = retry;
  const endpoint = `${method} ${path}`;
  const url = `${baseUrl}${path}`;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  for (let attempt = 1; ; attempt++) {
    let failure: TinkerError;
    let retryAfterSeconds: number | undefined;
    try {
      const response = await fetch(url, {
        method,
        headers: {
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(payload === undefined ? {} : { body: payload }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await response.text();
      if (response.ok) {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          throw new TinkerError(`${endpoint}: HTTP ${response.status} but the body is not JSON: ${bodyExcerpt(text)}`, {
            endpoint,
            status: response.status,
            body: bodyExcerpt(text),
            attempts: attempt,
          });
        }
      }
      const plural = attempt === 1 ? '' : 's';
      failure = new TinkerError(
        `${endpoint}: HTTP ${response.status} after ${attempt} attempt${plural}: ${bodyExcerpt(text)}`,
        {
          endpoint,
          status: response.status,
          body: bodyExcerpt(text),
          attempts: attempt,
        },
      );
      if (!isRetryableStatus(response.status)) throw failure;
      const header = response.headers.get('retry-after');
      if (header !== null && header.trim() !== '' && Number.isFinite(Number(header)))
        retryAfterSeconds = Number(header);
    } catch (error) {
      if (error instanceof TinkerError) throw error;
      const timedOut = error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError');
      const reason = timedOut ? `no answer within ${timeoutMs} ms` : `request failed (${describe(error)})`;
      failure = new TinkerError(
        `${endpoint}: ${reason} after ${attempt} attempt${attempt === 1 ? '' : 's'} (${url})`,
        { endpoint, attempts: attempt },
        { cause: error },
      );
    }
    if (attempt > maxRetries) throw failure;
    await sleep(backoffDelayMs(attempt, retry, retryAfterSeconds));
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? error.message;
}
