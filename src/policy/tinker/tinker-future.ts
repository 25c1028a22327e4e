/**
 * Fetching a Tinker future's result the way the SDK does (tinker 0.38.0 `lib/api_future_impl.py`):
 * `POST /api/v1/retrieve_future { request_id, allow_metadata_only }` with no transport retries and
 * a 45 s timeout (the server long-polls), headers `X-Tinker-Request-Iteration`,
 * `X-Tinker-Request-Type` (and `X-Tinker-Create-Promise-Roundtrip-Time` on the first poll),
 * `Accept: application/x-protobuf` for the results the SDK reads as protobuf (samples and
 * forward/backward outputs; ./tinker-proto.ts decodes them — a JSON answer is read too).
 *
 * Answers: `{type:'try_again'}` → poll again; `{status:'complete_metadata'}` → poll again for the
 * payload; `{error, category}` → the request failed; otherwise the result. Errors: 408 and 5xx poll
 * again at once, 429 and no answer after `min(2^c, 30)` s, a bare 400 up to 3 times, 402 pauses
 * 5 s (billing window), 410 means the promise expired — `FutureExpiredError`, whose caller
 * resubmits the original request (the SDK's sampling client does) — anything else fails.
 * There is no overall deadline (the SDK has none); `timeoutMs` sets one when a caller wants it.
 */
import { billingPauseMs, futureBadRequestRetries, futurePollAction } from './backoff.ts';
import { decodeForwardBackwardOutput, decodeSampleResponse } from './tinker-proto.ts';
import { TinkerError } from './tinker-error.ts';
import { answerJson, defaultSleep, type RetryOptions, sendRequest, type TinkerAnswer } from './tinker-http.ts';

/** The SDK's `request_type` names (the `X-Tinker-Request-Type` header). */
export type TinkerRequestType =
  | 'CreateModel'
  | 'LoadWeights'
  | 'Forward'
  | 'ForwardBackward'
  | 'OptimStep'
  | 'SaveWeights'
  | 'SaveWeightsForSampler'
  | 'Sample'
  | 'UnloadModel';

const protobufResults: ReadonlySet<TinkerRequestType> = new Set(['Sample', 'Forward', 'ForwardBackward']);

/** HTTP 410 while polling: the promise is gone; the original request may be sent again. */
export class FutureExpiredError extends TinkerError {}

export interface FutureRequest {
  requestId: string;
  requestType: TinkerRequestType;
  /** Seconds from sending the request to its future's answer (first poll's header). */
  roundtripSeconds?: number;
}

export interface FutureOptions {
  baseUrl: string;
  headers: Record<string, string>;
  retry: RetryOptions;
  /** Longest wait for one result; default none (the SDK's). */
  timeoutMs?: number;
}

export async function retrieveFuture(request: FutureRequest, options: FutureOptions): Promise<unknown> {
  const { retry } = options;
  const sleep = retry.sleep ?? defaultSleep;
  const now = retry.now ?? (() => performance.now());
  const endpoint = 'POST /api/v1/retrieve_future';
  const started = now();
  const state = {
    allowMetadataOnly: true,
    connectionRetries: 0,
    badRequestRetries: 0,
    billingSince: undefined as number | undefined,
  };
  for (let iteration = 0; ; iteration++) {
    if (options.timeoutMs !== undefined && now() - started > options.timeoutMs)
      throw new TinkerError(
        `${request.requestType} (future ${request.requestId}): no result within ${options.timeoutMs} ms`,
        {
          endpoint,
          attempts: iteration,
          requestId: request.requestId,
        },
      );
    let answer: TinkerAnswer;
    try {
      answer = await sendRequest(
        {
          baseUrl: options.baseUrl,
          method: 'POST',
          path: '/api/v1/retrieve_future',
          body: { request_id: request.requestId, allow_metadata_only: state.allowMetadataOnly },
          headers: {
            ...options.headers,
            'X-Tinker-Request-Iteration': String(iteration),
            'X-Tinker-Request-Type': request.requestType,
            ...(protobufResults.has(request.requestType) ? { accept: 'application/x-protobuf' } : {}),
            ...(iteration === 0
              ? { 'X-Tinker-Create-Promise-Roundtrip-Time': String(request.roundtripSeconds ?? 0) }
              : {}),
          },
        },
        { ...retry, maxRetries: 0, timeoutMs: Math.max(retry.timeoutMs ?? 0, 45_000) },
      );
    } catch (error) {
      if (!(error instanceof TinkerError)) throw error;
      await onPollError(error, request, state, {
        sleep,
        now,
        billingWindowMs: retry.billingPauseWindowMs ?? 3_600_000,
      });
      continue;
    }
    state.connectionRetries = 0;
    if ((answer.headers.get('content-type') ?? '').includes('application/x-protobuf'))
      return request.requestType === 'Sample'
        ? decodeSampleResponse(answer.bytes)
        : decodeForwardBackwardOutput(answer.bytes);
    const result = answerJson(answer, endpoint) as Record<string, unknown> | null;
    if (result === null || typeof result !== 'object') return result;
    if (result.type === 'try_again') continue;
    if (result.status === 'complete_metadata') {
      state.allowMetadataOnly = false;
      continue;
    }
    if ('error' in result)
      throw new TinkerError(
        `${request.requestType} (future ${request.requestId}) failed (${String(result.category ?? 'unknown')}): ${String(result.error)}`,
        {
          endpoint,
          status: answer.status,
          body: String(result.error).slice(0, 500),
          attempts: iteration + 1,
          requestId: request.requestId,
        },
      );
    return result;
  }
}

async function onPollError(
  error: TinkerError,
  request: FutureRequest,
  state: { connectionRetries: number; badRequestRetries: number; billingSince: number | undefined },
  { sleep, now, billingWindowMs }: { sleep: (ms: number) => Promise<void>; now: () => number; billingWindowMs: number },
): Promise<void> {
  const status = error.status ?? 0;
  if (status === 402) {
    state.billingSince ??= now();
    if (now() - state.billingSince <= billingWindowMs) {
      await sleep(billingPauseMs);
      return;
    }
  }
  const action = status === 402 ? 'fatal' : futurePollAction(status);
  if (action !== 'retry-with-backoff') state.connectionRetries = 0;
  if (action === 'retry') {
    if (status === 408) state.badRequestRetries = 0;
    return;
  }
  if (action === 'retry-with-backoff') {
    await sleep(Math.min(2 ** state.connectionRetries, 30) * 1000);
    state.connectionRetries += 1;
    return;
  }
  if (action === 'retry-if-budget' && state.badRequestRetries < futureBadRequestRetries) {
    state.badRequestRetries += 1;
    return;
  }
  const details = { ...error.details, requestId: request.requestId };
  if (action === 'resubmit')
    throw new FutureExpiredError(
      `${request.requestType} (future ${request.requestId}): the promise expired (HTTP 410)`,
      details,
      {
        cause: error,
      },
    );
  throw new TinkerError(`${request.requestType} (future ${request.requestId}) failed: ${error.message}`, details, {
    cause: error,
  });
}
