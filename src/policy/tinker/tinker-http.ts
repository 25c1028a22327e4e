/**
 * One Tinker HTTP call with the SDK's retry rules (./backoff.ts): transport retries of one request
 * (stainless: 408/409/429/5xx/no answer, `x-should-retry`, `retry-after`), and call retries above
 * them (`execute_with_retries`: 300 s window, 402 billing pause).
 *
 * Every non-GET request carries an `X-Idempotency-Key` (the SDK's header) that stays the same on
 * every retry of that call — so a server that applied a POST whose answer was lost sees the same
 * key again and answers it without applying it twice; the SDK's call retries also keep the
 * request's `seq_id`. `x-stainless-retry-count` counts the transport retries, as the SDK's does.
 *
 *   const answer = await sendCall({ baseUrl, method: 'POST', path: '/api/v1/create_session', body }, options);
 */
import { randomUUID } from 'node:crypto';
import {
  billingPauseMs,
  callRetryDelayMs,
  callRetryWindowMs,
  retryAfterSeconds,
  shouldRetryResponse,
  transportDelayMs,
  transportMaxRetries,
} from './backoff.ts';
import { bodyExcerpt, TinkerError } from './tinker-error.ts';

export interface RetryOptions {
  /** Per-attempt timeout. Default 60 000 ms (the SDK's `DEFAULT_TIMEOUT`). */
  timeoutMs?: number;
  /** Transport retries of one request. Default 10 (the SDK's `DEFAULT_MAX_RETRIES`). */
  maxRetries?: number;
  /** How long a retryable call is sent again. Default 300 000 ms (the SDK's). */
  callRetryWindowMs?: number;
  /** How long HTTP 402 (billing) pauses the run before failing. Default 3 600 000 ms (client config's default). */
  billingPauseWindowMs?: number;
  /** Waits between attempts (tests record them). Default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Jitter in [0, 1) of the transport backoff. Default Math.random. */
  random?: () => number;
  /** Clock of the retry windows (ms). Default performance.now. */
  now?: () => number;
}

export interface TinkerRequest {
  baseUrl: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** A JSON body … */
  body?: unknown;
  /** … or a protobuf one (`application/x-protobuf`). */
  protobuf?: Uint8Array;
  headers?: Record<string, string>;
  /** Reused on every retry; default a fresh `agentrl-retry-<uuid>` per call (non-GET only). */
  idempotencyKey?: string;
  /** Overrides of the retry options for this call (e.g. the heartbeat: no retries, 10 s). */
  retry?: RetryOptions;
}

export interface TinkerAnswer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  /** Attempts this call took (transport and call retries together). */
  attempts: number;
}

export const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The SDK's header names. */
export const idempotencyHeader = 'X-Idempotency-Key';
export const retryCountHeader = 'x-stainless-retry-count';

/** A failed attempt the caller may retry: `status` undefined = no answer. */
function isRetryableFailure(error: TinkerError): boolean {
  const status = error.status;
  return status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
}

/** One request with the transport's retries. Throws a `TinkerError` (with `status` when answered). */
export async function sendRequest(request: TinkerRequest, options: RetryOptions = {}): Promise<TinkerAnswer> {
  const {
    timeoutMs = 60_000,
    maxRetries = transportMaxRetries,
    sleep = defaultSleep,
    random = Math.random,
  } = {
    ...options,
    ...request.retry,
  };
  const endpoint = `${request.method} ${request.path}`;
  const url = `${request.baseUrl}${request.path}`;
  const key = request.method === 'GET' ? undefined : (request.idempotencyKey ?? `agentrl-retry-${randomUUID()}`);
  const payload = request.protobuf ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
  const contentType = request.protobuf !== undefined ? 'application/x-protobuf' : 'application/json';
  for (let retriesTaken = 0; ; retriesTaken++) {
    let failure: TinkerError;
    let serverSeconds: number | undefined;
    let retry: boolean;
    try {
      const response = await fetch(url, {
        method: request.method,
        headers: {
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': contentType }),
          [retryCountHeader]: String(retriesTaken),
          'x-stainless-read-timeout': String(timeoutMs / 1000),
          ...(key === undefined ? {} : { [idempotencyHeader]: key }),
          ...request.headers,
        },
        ...(payload === undefined ? {} : { body: payload }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (response.ok) return { status: response.status, headers: response.headers, bytes, attempts: retriesTaken + 1 };
      const excerpt = bodyExcerpt(new TextDecoder().decode(bytes));
      failure = new TinkerError(
        `${endpoint}: HTTP ${response.status} after ${retriesTaken + 1} attempt${retriesTaken === 0 ? '' : 's'}: ${excerpt}`,
        { endpoint, status: response.status, body: excerpt, attempts: retriesTaken + 1 },
      );
      retry = shouldRetryResponse(response.status, response.headers.get('x-should-retry'));
      serverSeconds = retryAfterSeconds(response.headers);
    } catch (error) {
      const timedOut = error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError');
      const reason = timedOut ? `no answer within ${timeoutMs} ms` : `request failed (${describe(error)})`;
      failure = new TinkerError(
        `${endpoint}: ${reason} after ${retriesTaken + 1} attempt${retriesTaken === 0 ? '' : 's'} (${url})`,
        { endpoint, attempts: retriesTaken + 1 },
        { cause: error },
      );
      retry = true;
    }
    if (!retry || retriesTaken >= maxRetries) throw failure;
    await sleep(transportDelayMs(retriesTaken, random(), serverSeconds));
  }
}

/**
 * One call: `sendRequest`, sent again (same idempotency key) while its failure is retryable and the
 * call window lasts, and paused on HTTP 402 for up to the billing window.
 */
export async function sendCall(request: TinkerRequest, options: RetryOptions = {}): Promise<TinkerAnswer> {
  const merged = { ...options, ...request.retry };
  const { sleep = defaultSleep, now = () => performance.now() } = merged;
  const window = merged.callRetryWindowMs ?? callRetryWindowMs;
  const billingWindow = merged.billingPauseWindowMs ?? 3_600_000;
  const keyed: TinkerRequest =
    request.method === 'GET'
      ? request
      : { ...request, idempotencyKey: request.idempotencyKey ?? `agentrl-retry-${randomUUID()}` };
  const started = now();
  let billingSince: number | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      return await sendRequest(keyed, options);
    } catch (error) {
      if (!(error instanceof TinkerError)) throw error;
      if (error.status === 402) {
        billingSince ??= now();
        if (now() - billingSince <= billingWindow) {
          await sleep(billingPauseMs);
          continue;
        }
        throw new TinkerError(
          `${error.endpoint}: paused for billing (HTTP 402) longer than ${billingWindow / 1000} s: ${error.body ?? ''}`,
          error.details,
          { cause: error },
        );
      }
      const elapsed = now() - started;
      if (!isRetryableFailure(error) || elapsed >= window) throw error;
      await sleep(Math.min(callRetryDelayMs(attempt), Math.max(0, window - elapsed)));
    }
  }
}

/** The answer's JSON; a body that is not JSON is a named `TinkerError`. */
export function answerJson(answer: TinkerAnswer, endpoint: string): unknown {
  const text = new TextDecoder().decode(answer.bytes);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new TinkerError(`${endpoint}: HTTP ${answer.status} but the body is not JSON: ${bodyExcerpt(text)}`, {
      endpoint,
      status: answer.status,
      body: bodyExcerpt(text),
      attempts: answer.attempts,
    });
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? error.message;
}
