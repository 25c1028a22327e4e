/**
 * JSON POST with the retry policy of the OpenAI-compatible policy: a 408, 409, 429 or 5xx answer,
 * a network error or no answer within `timeoutMs` is retried after an exponential backoff
 * (`retryDelayMs · 2^attempt`, capped by `maxRetryDelayMs`; a `Retry-After` header in seconds wins
 * when it is shorter than the cap). Any other HTTP error, and a body that is not JSON, fail at
 * once. Every failure is a `PolicyRequestError` naming the URL, the status and an excerpt of the
 * body, and how many attempts were made. An aborted `signal` cancels the request in flight (or the
 * wait before a retry) and rejects with the signal's reason, never retried.
 */
import { AgentRlError } from '../core/errors.ts';

export interface RequestFailure extends Record<string, unknown> {
  url: string;
  /** HTTP status; undefined when no answer came (timeout, connection refused). */
  status?: number;
  /** The first 500 characters of the answer body. */
  body?: string;
  attempts: number;
}

/** A request to an OpenAI-compatible server failed; `details` says where and how. */
export class PolicyRequestError extends AgentRlError {
  declare readonly details: RequestFailure;
  constructor(message: string, details: RequestFailure, options?: { cause?: unknown }) {
    super('POLICY_REQUEST', message, details, options);
  }
}

export interface RetryOptions {
  /** Per-attempt timeout. Default 120 000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 4. */
  maxRetries?: number;
  /** First backoff delay. Default 500 ms. */
  retryDelayMs?: number;
  /** Longest backoff delay. Default 20 000 ms. */
  maxRetryDelayMs?: number;
}

export interface PostJsonOptions extends RetryOptions {
  headers?: Record<string, string>;
  /** Waits between attempts (tests may pass a recorder). Default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Cancels the request: the fetch in flight is aborted and `postJson` rejects with `signal.reason`. */
  signal?: AbortSignal;
}

const EXCERPT = 500;

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export async function postJson(url: string, body: unknown, options: PostJsonOptions = {}): Promise<unknown> {
  const { timeoutMs = 120_000, maxRetries = 4, retryDelayMs = 500, maxRetryDelayMs = 20_000, headers = {} } = options;
  const { signal } = options;
  const sleep = options.sleep ?? ((ms: number) => abortableDelay(ms, signal));
  const payload = JSON.stringify(body);
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    let failure: PolicyRequestError;
    let retryAfterMs: number | undefined;
    try {
      const timeout = AbortSignal.timeout(timeoutMs);
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
        body: payload,
        signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
      });
      const text = await response.text();
      if (response.ok) {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          throw new PolicyRequestError(
            `POST ${url}: HTTP ${response.status} but the body is not JSON: ${excerpt(text)}`,
            { url, status: response.status, body: excerpt(text), attempts: attempt },
          );
        }
      }
      failure = new PolicyRequestError(
        `POST ${url}: HTTP ${response.status} ${response.statusText} after ${attempt} attempt${attempt === 1 ? '' : 's'}: ${excerpt(text)}`,
        {
          url,
          status: response.status,
          body: excerpt(text),
          attempts: attempt,
        },
      );
      if (!isRetryableStatus(response.status)) throw failure;
      const retryAfter = Number(response.headers.get('retry-after'));
      if (Number.isFinite(retryAfter) && retryAfter >= 0 && response.headers.has('retry-after'))
        retryAfterMs = retryAfter * 1000;
    } catch (error) {
      signal?.throwIfAborted(); // the caller cancelled: its reason, not a request failure
      if (error instanceof PolicyRequestError) throw error;
      const timedOut = error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError');
      const reason = timedOut ? `no answer within ${timeoutMs} ms` : `request failed (${describe(error)})`;
      failure = new PolicyRequestError(
        `POST ${url}: ${reason} after ${attempt} attempt${attempt === 1 ? '' : 's'}`,
        { url, attempts: attempt },
        { cause: error },
      );
    }
    if (attempt > maxRetries) throw failure;
    const backoff = Math.min(maxRetryDelayMs, retryDelayMs * 2 ** (attempt - 1));
    await sleep(retryAfterMs === undefined ? backoff : Math.min(maxRetryDelayMs, retryAfterMs));
  }
}

/** Resolves after `ms`; an abort of `signal` rejects with its reason at once. */
function abortableDelay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT)}…` : flat;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? error.message;
}
