/**
 * `TinkerClient`: a session on a Tinker server, speaking the protocol of the official `tinker` SDK
 * 0.38.0 (read from its source: `lib/internal_client_holder.py`, `lib/public_interfaces/*`,
 * `resources/*`, `types/*`). What it sends, in order:
 *
 *   POST /api/v1/client/config { sdk_version }            the server's flags (404: the SDK's defaults)
 *   POST /api/v1/create_session { tags, user_metadata, sdk_version, type }
 *   POST /api/v1/session_heartbeat { session_id, type }   every 10 s, no retries, stops on 410
 *   POST /api/v1/create_model { session_id, model_seq_id, base_model, lora_config, optimizer_config, type }
 *   POST /api/v1/load_weights { session_id, model_seq_id, path, optimizer, type }   a model created from a checkpoint
 *   POST /api/v1/create_sampling_session { session_id, sampling_session_seq_id, model_path | base_model, type }
 *
 * Each training or sampling call answers a future (`{ request_id }`), fetched by ./tinker-future.ts.
 * `model_seq_id` and `sampling_session_seq_id` count from 0 per session, as the SDK's do.
 *
 *   const client = new TinkerClient({ baseUrl: 'http://127.0.0.1:8000' });
 *   await client.connect();
 *   const modelId = await client.createModel({ baseModel, rank: 8, seed: 0 });
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { FutureExpiredError, retrieveFuture, type TinkerRequestType } from './tinker-future.ts';
import { TinkerError } from './tinker-error.ts';
import { answerJson, type RetryOptions, sendCall, sendRequest } from './tinker-http.ts';

/** The SDK version whose protocol this client speaks (sent as `sdk_version`). */
export const tinkerSdkVersion = '0.38.0';

export const hostedTinkerUrl = 'https://tinker.thinkingmachines.dev/services/tinker-prod';

export interface TinkerClientOptions {
  /** Server root, without `/api/v1`. Default `TINKER_BASE_URL`, else hosted Tinker. */
  baseUrl?: string;
  /** Sent as `X-API-Key`. Default `TINKER_API_KEY`; none for a local server. */
  apiKey?: string;
  retry?: RetryOptions;
  /** Longest wait for one future. Default none (the SDK has none). */
  futureTimeoutMs?: number;
  /** Session heartbeat period; 0 = none. Default 10 000 ms (the SDK's). */
  heartbeatMs?: number;
  /** Where the defaults are read. Default `process.env`. */
  environment?: Record<string, string | undefined>;
}

/** The server flags the client follows (`ClientConfigResponse`; the SDK's defaults when absent). */
export interface TinkerServerConfig {
  /** Most datums per forward_backward request. */
  fwdbwdMaxChunkLen: number;
  /** Most estimated bytes per forward_backward request. */
  fwdbwdMaxChunkBytes: number;
  /** Chunks of one forward_backward sent at once (else one after another). */
  parallelFwdbwdChunks: boolean;
  /** The server wants zstd-compressed forward_backward bodies. */
  protoCompressFwdbwd: boolean;
  /** Seconds a 402 (billing) pause may last. */
  billingPauseSeconds: number;
  /** Most sampling requests in flight. */
  sampleMaxConcurrentRequests: number;
}

export const defaultServerConfig: TinkerServerConfig = {
  fwdbwdMaxChunkLen: 1024,
  fwdbwdMaxChunkBytes: 5_000_000,
  parallelFwdbwdChunks: true,
  protoCompressFwdbwd: false,
  billingPauseSeconds: 3600,
  sampleMaxConcurrentRequests: 2000,
};

export interface SubmitBody {
  body?: unknown;
  protobuf?: Uint8Array;
  headers?: Record<string, string>;
}

/** Wall time of the calls, by endpoint (request to result, polling included). */
export type CallTimes = Record<string, { calls: number; ms: number }>;

export class TinkerClient {
  readonly baseUrl: string;
  sessionId: string | undefined;
  config: TinkerServerConfig = { ...defaultServerConfig };
  readonly times: CallTimes = {};
  private readonly headers: Record<string, string>;
  private readonly retry: RetryOptions;
  private readonly futureTimeoutMs: number | undefined;
  private readonly heartbeatMs: number;
  private heartbeat: NodeJS.Timeout | undefined;
  private modelSeqId = 0;
  private samplingSessionSeqId = 0;

  constructor(options: TinkerClientOptions = {}) {
    const environment = options.environment ?? process.env;
    const baseUrl = (options.baseUrl ?? environment.TINKER_BASE_URL ?? hostedTinkerUrl).replace(/\/+$/, '');
    if (!/^https?:\/\//.test(baseUrl))
      throw new InvalidArgumentError(`baseUrl must start with http:// or https://, got "${baseUrl}"`, { baseUrl });
    this.baseUrl = baseUrl;
    const apiKey = options.apiKey ?? environment.TINKER_API_KEY;
    this.headers = {
      'user-agent': `agentrl (tinker-protocol/${tinkerSdkVersion})`,
      ...(apiKey === undefined || apiKey === '' ? {} : { 'X-API-Key': apiKey }),
    };
    this.retry = options.retry ?? {};
    this.futureTimeoutMs = options.futureTimeoutMs;
    this.heartbeatMs = options.heartbeatMs ?? 10_000;
  }

  private get retryWithBilling(): RetryOptions {
    return { billingPauseWindowMs: this.config.billingPauseSeconds * 1000, ...this.retry };
  }

  /** One JSON call with the SDK's retries (idempotency key reused on every retry). */
  async post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<unknown> {
    const answer = await sendCall(
      { baseUrl: this.baseUrl, method: 'POST', path, body, headers: { ...this.headers, ...headers } },
      this.retryWithBilling,
    );
    return answerJson(answer, `POST ${path}`);
  }

  /** A request (JSON or protobuf) that answers a future, then the future's result. */
  async submit(path: string, request: SubmitBody, requestType: TinkerRequestType): Promise<unknown> {
    return (await this.send(path, request, requestType)).result;
  }

  /**
   * Sends a request that answers a future; resolves once the server has ACCEPTED it (its
   * `request_id`), with `result` the future's pending result — so a caller can send the next
   * request in order before this one finishes (the SDK's pipelining of forward_backward and optim_step).
   */
  async send(path: string, request: SubmitBody, requestType: TinkerRequestType): Promise<{ result: Promise<unknown> }> {
    const started = performance.now();
    const record = (): void => {
      const entry = this.times[path] ?? { calls: 0, ms: 0 };
      this.times[path] = entry;
      entry.calls += 1;
      entry.ms += performance.now() - started;
    };
    let requestId: string;
    try {
      const answer = await sendCall(
        { baseUrl: this.baseUrl, method: 'POST', path, ...request, headers: { ...this.headers, ...request.headers } },
        this.retryWithBilling,
      );
      const future = answerJson(answer, `POST ${path}`) as { request_id?: unknown } | null;
      const id = future?.request_id;
      if (typeof id !== 'string' && typeof id !== 'number')
        throw new TinkerError(`POST ${path}: the answer has no request_id: ${JSON.stringify(future).slice(0, 300)}`, {
          endpoint: `POST ${path}`,
          status: answer.status,
          body: JSON.stringify(future).slice(0, 500),
          attempts: answer.attempts,
        });
      requestId = String(id);
    } catch (error) {
      record();
      throw error;
    }
    const result = this.result(requestId, requestType, (performance.now() - started) / 1000).finally(record);
    // A caller that never awaits the result must not crash the process with an unhandled rejection.
    result.catch(() => undefined);
    return { result };
  }

  /** Polls one future to its result. */
  result(requestId: string, requestType: TinkerRequestType, roundtripSeconds = 0): Promise<unknown> {
    return retrieveFuture(
      { requestId, requestType, roundtripSeconds },
      {
        baseUrl: this.baseUrl,
        headers: this.headers,
        retry: this.retryWithBilling,
        ...(this.futureTimeoutMs === undefined ? {} : { timeoutMs: this.futureTimeoutMs }),
      },
    );
  }

  /** The `client/config` handshake, the session and its heartbeat. Idempotent. */
  async connect(tags: readonly string[] = []): Promise<string> {
    if (this.sessionId !== undefined) return this.sessionId;
    this.config = await this.fetchServerConfig();
    const answer = (await this.post('/api/v1/create_session', {
      tags: [...tags],
      user_metadata: {},
      sdk_version: tinkerSdkVersion,
      type: 'create_session',
    })) as { session_id?: unknown; warning_message?: unknown; error_message?: unknown };
    if (typeof answer.session_id !== 'string')
      throw new TinkerError('POST /api/v1/create_session: no session_id in the answer', {
        endpoint: 'POST /api/v1/create_session',
        status: 200,
        body: JSON.stringify(answer).slice(0, 500),
        attempts: 1,
      });
    for (const message of [answer.warning_message, answer.error_message])
      if (typeof message === 'string' && message !== '') console.error(`tinker: ${message}`);
    this.sessionId = answer.session_id;
    if (this.heartbeatMs > 0) this.startHeartbeat(answer.session_id);
    return answer.session_id;
  }

  private async fetchServerConfig(): Promise<TinkerServerConfig> {
    let answer: Record<string, unknown>;
    try {
      answer = (await this.post('/api/v1/client/config', { sdk_version: tinkerSdkVersion })) as Record<string, unknown>;
    } catch (error) {
      // A server that predates the endpoint (SkyRL tx): the SDK's defaults.
      if (error instanceof TinkerError && (error.status === 404 || error.status === 405))
        return { ...defaultServerConfig };
      throw error;
    }
    const number = (key: string, fallback: number): number =>
      typeof answer[key] === 'number' && Number.isFinite(answer[key]) && (answer[key] as number) > 0
        ? (answer[key] as number)
        : fallback;
    const flag = (key: string, fallback: boolean): boolean =>
      typeof answer[key] === 'boolean' ? (answer[key] as boolean) : fallback;
    return {
      fwdbwdMaxChunkLen: number('fwdbwd_max_chunk_len', defaultServerConfig.fwdbwdMaxChunkLen),
      fwdbwdMaxChunkBytes: number('fwdbwd_max_chunk_bytes_count', defaultServerConfig.fwdbwdMaxChunkBytes),
      parallelFwdbwdChunks: flag('parallel_fwdbwd_chunks', true),
      protoCompressFwdbwd: flag('proto_compress_fwdbwd', false),
      billingPauseSeconds: number('billing_exception_max_pause_duration_sec', defaultServerConfig.billingPauseSeconds),
      sampleMaxConcurrentRequests: number(
        'sample_max_concurrent_requests',
        defaultServerConfig.sampleMaxConcurrentRequests,
      ),
    };
  }

  /** The SDK's loop: wait the period, beat (no retries, 10 s), repeat — until closed or the server answers 410. */
  private startHeartbeat(sessionId: string): void {
    const beat = (): void => {
      this.heartbeat = setTimeout(() => {
        sendRequest(
          {
            baseUrl: this.baseUrl,
            method: 'POST',
            path: '/api/v1/session_heartbeat',
            body: { session_id: sessionId, type: 'session_heartbeat' },
            headers: this.headers,
          },
          { ...this.retry, maxRetries: 0, timeoutMs: 10_000 },
        ).then(
          () => {
            if (this.heartbeat !== undefined) beat();
          },
          (error: unknown) => {
            // 410: the session has finished; the SDK stops its heartbeat. Other failures: beat on.
            if (error instanceof TinkerError && error.status === 410) this.close();
            else if (this.heartbeat !== undefined) beat();
          },
        );
      }, this.heartbeatMs);
      this.heartbeat.unref();
    };
    beat();
  }

  /** A LoRA training run on `baseModel` (AdamW, the SDK's default optimizer); its model id once built. */
  async createModel({ baseModel, rank, seed }: { baseModel: string; rank: number; seed?: number }): Promise<string> {
    const sessionId = await this.connect();
    const result = (await this.submit(
      '/api/v1/create_model',
      {
        body: {
          session_id: sessionId,
          model_seq_id: this.modelSeqId++,
          base_model: baseModel,
          lora_config: {
            rank,
            ...(seed === undefined ? {} : { seed }),
            train_unembed: true,
            train_mlp: true,
            train_attn: true,
          },
          optimizer_config: { type: 'adamw' },
          type: 'create_model',
        },
      },
      'CreateModel',
    )) as { model_id?: unknown } | null;
    return requiredId(result, 'model_id', '/api/v1/create_model');
  }

  /**
   * A training run created from a checkpoint: `load_weights` is the new model's FIRST request
   * (hosted Tinker accepts it only then). `optimizer` also restores the Adam moments. The model id
   * is the one the server derives, `<session_id>:train:<model_seq_id>`.
   */
  async createModelFromCheckpoint({ path, optimizer }: { path: string; optimizer: boolean }): Promise<string> {
    const sessionId = await this.connect();
    const modelSeqId = this.modelSeqId++;
    await this.submit(
      '/api/v1/load_weights',
      { body: { session_id: sessionId, model_seq_id: modelSeqId, path, optimizer, type: 'load_weights' } },
      'LoadWeights',
    );
    return `${sessionId}:train:${modelSeqId}`;
  }

  /** A sampling session on sampler weights (`modelPath`) or on the base model. */
  async createSamplingSession(target: { modelPath: string } | { baseModel: string }): Promise<string> {
    const sessionId = await this.connect();
    const answer = (await this.post('/api/v1/create_sampling_session', {
      session_id: sessionId,
      sampling_session_seq_id: this.samplingSessionSeqId++,
      ...('modelPath' in target ? { model_path: target.modelPath } : { base_model: target.baseModel }),
      type: 'create_sampling_session',
    })) as { sampling_session_id?: unknown };
    return requiredId(answer, 'sampling_session_id', '/api/v1/create_sampling_session');
  }

  /** Deletes a checkpoint by its `tinker://<run>/<kind>/<name>` path (the SDK's RestClient route). */
  async deleteCheckpoint(tinkerPath: string): Promise<void> {
    const match = /^tinker:\/\/([^/]+)\/(.+)$/.exec(tinkerPath);
    if (match === null)
      throw new InvalidArgumentError(`not a tinker:// checkpoint path: "${tinkerPath}"`, { tinkerPath });
    const [, run = '', checkpoint = ''] = match;
    await sendCall(
      {
        baseUrl: this.baseUrl,
        method: 'DELETE',
        path: `/api/v1/training_runs/${encodeURIComponent(run)}/checkpoints/${checkpoint.split('/').map(encodeURIComponent).join('/')}`,
        headers: this.headers,
      },
      this.retryWithBilling,
    );
  }

  /** Stops the heartbeat. */
  close(): void {
    if (this.heartbeat !== undefined) clearTimeout(this.heartbeat);
    this.heartbeat = undefined;
  }
}

export { FutureExpiredError };

/** The id `field` of a create call's answer; a missing or non-string one is a `TinkerError` naming the call. */
function requiredId(answer: unknown, field: string, path: string): string {
  const id = answer !== null && typeof answer === 'object' ? (answer as Record<string, unknown>)[field] : undefined;
  if (typeof id === 'string') return id;
  throw new TinkerError(`POST ${path}: no ${field} in the answer`, {
    endpoint: `POST ${path}`,
    status: 200,
    body: JSON.stringify(answer).slice(0, 500),
    attempts: 1,
  });
}
