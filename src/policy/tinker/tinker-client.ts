/**
 * `TinkerClient`: the Tinker REST protocol (read from the open-source `tinker` SDK and SkyRL tx's
 * `tx/tinker/api.py`). Every training or sampling call is asynchronous on the server: the POST
 * answers `{ request_id }` at once, and the result is fetched by polling
 * `POST /api/v1/retrieve_future { request_id }` — which long-polls (SkyRL tx waits up to 300 s, then
 * answers 408), or answers `{ type: 'try_again' }` (hosted Tinker), the result, or a failure
 * (`{ error, category }`, or HTTP 400 with the error as `detail`).
 *
 *   const client = new TinkerClient({ baseUrl: 'http://127.0.0.1:8000' });
 *   await client.createSession();
 *   const modelId = await client.createModel({ baseModel, rank: 8 });
 *   const result = await client.call('/api/v1/forward_backward', { model_id: modelId, forward_backward_input: { data, loss_fn: 'cross_entropy' } });
 *
 * Sessions send a heartbeat every `heartbeatMs` (SkyRL tx drops a session silent for 300 s).
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { pollDelayMs } from './backoff.ts';
import { TinkerError } from './tinker-error.ts';
import { defaultSleep, requestJson, type RetryOptions } from './tinker-http.ts';

export interface TinkerClientOptions {
  /** Server root, without `/api/v1`. Default `TINKER_BASE_URL`, else hosted Tinker. */
  baseUrl?: string;
  /** Sent as `X-API-Key`. Default `TINKER_API_KEY`; none for a local server. */
  apiKey?: string;
  retry?: RetryOptions;
  /** Longest wait for one future. Default 900 000 ms. */
  futureTimeoutMs?: number;
  /** Session heartbeat period; 0 = none. Default 10 000 ms (the SDK's). */
  heartbeatMs?: number;
  /** Where the defaults are read. Default `process.env`. */
  environment?: Record<string, string | undefined>;
}

export const hostedTinkerUrl = 'https://tinker.thinkingmachines.dev/services/tinker-prod';

/** Wall time of the calls, by endpoint (request to result, polling included). */
export type CallTimes = Record<string, { calls: number; ms: number }>;

export class TinkerClient {
  readonly baseUrl: string;
  sessionId: string | undefined;
  readonly times: CallTimes = {};
  private readonly headers: Record<string, string>;
  private readonly retry: RetryOptions;
  private readonly futureTimeoutMs: number;
  private readonly heartbeatMs: number;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(options: TinkerClientOptions = {}) {
    const environment = options.environment ?? process.env;
    const baseUrl = (options.baseUrl ?? environment.TINKER_BASE_URL ?? hostedTinkerUrl).replace(/\/+$/, '');
    if (!/^https?:\/\//.test(baseUrl))
      throw new InvalidArgumentError(`baseUrl must start with http:// or https://, got "${baseUrl}"`, { baseUrl });
    this.baseUrl = baseUrl;
    const apiKey = options.apiKey ?? environment.TINKER_API_KEY;
    this.headers = apiKey === undefined || apiKey === '' ? {} : { 'x-api-key': apiKey };
    this.retry = options.retry ?? {};
    this.futureTimeoutMs = options.futureTimeoutMs ?? 900_000;
    this.heartbeatMs = options.heartbeatMs ?? 10_000;
  }

  /** One plain JSON request (no future). */
  async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    return requestJson({ baseUrl: this.baseUrl, method, path, body, headers: this.headers, retry: this.retry });
  }

  /** POST that answers a future, then the future's result. */
  async call(path: string, body: unknown): Promise<unknown> {
    const started = performance.now();
    try {
      const answer = await this.request('POST', path, body);
      const requestId = (answer as { request_id?: unknown } | null)?.request_id;
      if (typeof requestId !== 'string' && typeof requestId !== 'number') {
        throw new TinkerError(`POST ${path}: the answer has no request_id: ${JSON.stringify(answer).slice(0, 300)}`, {
          endpoint: `POST ${path}`,
          status: 200,
          body: JSON.stringify(answer).slice(0, 500),
          attempts: 1,
        });
      }
      return await this.retrieveFuture(String(requestId), path);
    } finally {
      const entry = this.times[path] ?? { calls: 0, ms: 0 };
      this.times[path] = entry;
      entry.calls += 1;
      entry.ms += performance.now() - started;
    }
  }

  /** Polls one future until it completes, fails or `futureTimeoutMs` passes. */
  async retrieveFuture(requestId: string, origin = 'a request'): Promise<unknown> {
    const endpoint = 'POST /api/v1/retrieve_future';
    const sleep = this.retry.sleep ?? defaultSleep;
    const deadline = performance.now() + this.futureTimeoutMs;
    for (let poll = 0; ; poll++) {
      let answer: unknown;
      try {
        answer = await requestJson({
          baseUrl: this.baseUrl,
          method: 'POST',
          path: '/api/v1/retrieve_future',
          body: { request_id: requestId },
          headers: this.headers,
          retry: { ...this.retry, timeoutMs: Math.max(this.retry.timeoutMs ?? 0, 330_000) },
        });
      } catch (error) {
        if (!(error instanceof TinkerError) || error.status !== 408) {
          if (error instanceof TinkerError && error.status !== undefined && error.status >= 400 && error.status < 500) {
            throw new TinkerError(
              `${origin} (future ${requestId}) failed: HTTP ${error.status}: ${error.body ?? ''}`,
              { ...error.details, requestId },
              { cause: error },
            );
          }
          throw error;
        }
        answer = { type: 'try_again' };
      }
      const record = answer as { type?: unknown; error?: unknown; category?: unknown } | null;
      if (record !== null && typeof record === 'object' && record.type !== 'try_again') {
        if (typeof record.error === 'string') {
          throw new TinkerError(
            `${origin} (future ${requestId}) failed (${String(record.category ?? 'unknown')}): ${record.error}`,
            { endpoint, status: 200, body: record.error.slice(0, 500), attempts: poll + 1, requestId },
          );
        }
        return answer;
      }
      if (performance.now() > deadline) {
        throw new TinkerError(`${origin} (future ${requestId}): no result within ${this.futureTimeoutMs} ms`, {
          endpoint,
          attempts: poll + 1,
          requestId,
        });
      }
      await sleep(pollDelayMs(poll));
    }
  }

  async createSession(tags: readonly string[] = ['agentrl']): Promise<string> {
    const answer = (await this.request('POST', '/api/v1/create_session', {
      tags: [...tags],
      user_metadata: {},
      sdk_version: 'agentrl-0.1.0',
      type: 'create_session',
    })) as { session_id?: unknown };
    if (typeof answer.session_id !== 'string')
      throw new TinkerError('POST /api/v1/create_session: no session_id in the answer', {
        endpoint: 'POST /api/v1/create_session',
        status: 200,
        body: JSON.stringify(answer).slice(0, 500),
        attempts: 1,
      });
    this.sessionId = answer.session_id;
    if (this.heartbeatMs > 0) {
      this.heartbeat = setInterval(() => {
        this.request('POST', '/api/v1/session_heartbeat', {
          session_id: this.sessionId,
          type: 'session_heartbeat',
        }).catch(() => undefined);
      }, this.heartbeatMs);
      this.heartbeat.unref();
    }
    return answer.session_id;
  }

  /** A LoRA training run on `baseModel`; returns its model id once the server has built it. */
  async createModel({ baseModel, rank, seed }: { baseModel: string; rank: number; seed?: number }): Promise<string> {
    if (this.sessionId === undefined) await this.createSession();
    const body = {
      session_id: this.sessionId,
      model_seq_id: 0,
      base_model: baseModel,
      lora_config: { rank, ...(seed === undefined ? {} : { seed }) },
      type: 'create_model',
    };
    const answer = (await this.request('POST', '/api/v1/create_model', body)) as {
      model_id?: unknown;
      request_id?: unknown;
    };
    const result = (await this.retrieveFuture(String(answer.request_id), 'POST /api/v1/create_model')) as {
      model_id?: unknown;
    };
    const modelId = result.model_id ?? answer.model_id;
    if (typeof modelId !== 'string')
      throw new TinkerError('POST /api/v1/create_model: no model_id in the answer', {
        endpoint: 'POST /api/v1/create_model',
        status: 200,
        body: JSON.stringify(result).slice(0, 500),
        attempts: 1,
      });
    return modelId;
  }

  /** Stops the heartbeat. */
  close(): void {
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}
