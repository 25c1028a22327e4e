/**
 * The training gateway: an OpenAI-compatible chat-completions server that records every call as
 * token ids and log-probs, per session, so an agent written with any framework (the Vercel AI SDK,
 * the `openai` SDK, LangChain.js, Mastra) is trained by pointing its base URL here, unchanged.
 *
 *   POST /v1/chat/completions        as `serve-policy` (streaming, tools in the model's format,
 *                                    logprobs); the call names its session (session-id.ts):
 *                                    header `x-session-id`, model `agentrl/<session>` or `user`
 *   POST /v1/sessions/{id}/reward    {"reward": number, "success"?: boolean} — scores the session
 *   GET  /v1/sessions/{id}           {id, calls, prefixBreaks, reward}
 *   GET  /v1/models, /health
 *
 * Each call is recorded once its whole response has reached the client's socket: a client that
 * disconnects mid-stream leaves no half-recorded call (counted as `callsAbandoned`). Calls of one
 * session join into one trajectory by exact prefix continuation (session-trajectory.ts). A
 * session idle for `sessionTimeoutMs` (no call in flight) is dropped and counted. The sampler is
 * any `Policy` (a built-in one streams token by token, through `generateBatch`'s optional `onToken`;
 * see policy-generator.ts); a session opened by the trainer samples at the trainer's temperature whatever
 * the client asks (old log-probs must be of that distribution), and its reply budget is capped.
 * `n` > 1 is refused (a session continues one reply). Errors are OpenAI-shaped.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Policy } from '../../policy/types.ts';
import { baseUrl, listen, pathOf, readJsonBody, sendJson } from '../http.ts';
import { RequestError, respondWithError } from '../openai/openai-errors.ts';
import { createPolicyEndpoints, type FinishedChat } from '../openai/policy-server.ts';
import { chatRequestSchema, toMessages } from '../openai/protocol.ts';
import { policyGenerator } from './policy-generator.ts';
import { sessionIdOf } from './session-id.ts';
import { SessionStore, type FinishedSession, type GatewayMetrics, type Session, type SessionSettings, type DropReason } from './session-store.ts';
import { joinCalls } from './session-trajectory.ts';

export interface GatewayOptions {
  /** What samples the replies: the policy being trained, or an inference server as a `Policy`. */
  sampler: Policy;
  /** The model id `/v1/models` lists. Default 'agentrl'. Requests may name any model. */
  modelName?: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Milliseconds without a call before an unfinished session is dropped. Default 120 000. */
  sessionTimeoutMs?: number;
  /** A call naming a session nobody opened opens it (an agent outside `gatewayCollect`). Default true. */
  openUnknownSessions?: boolean;
  /** Milliseconds the batcher waits for more calls to batch. Default 10. */
  batchWindowMs?: number;
  /** Rows per batch at most. Default 64. */
  maxBatchSize?: number;
}

export interface Gateway {
  /** Server root, e.g. http://127.0.0.1:43121. */
  url: string;
  /** What clients use as their base URL: `${url}/v1`. */
  baseURL: string;
  /** Opens a session for an agent run; its calls are recorded until `finishSession` or `dropSession`. */
  openSession(id: string, settings?: SessionSettings): Session;
  /** Removes the session and returns its calls and final messages (undefined: unknown or already dropped). */
  finishSession(id: string): FinishedSession | undefined;
  dropSession(id: string, reason: DropReason): void;
  /** Sessions a client opened and scored itself (POST …/reward), finished and removed. */
  takeRewardedSessions(): FinishedSession[];
  metrics(): GatewayMetrics;
  /** Stops serving; sessions still open are dropped ('closed', counted) — take the scored ones first. */
  close(): Promise<void>;
}

const rewardSchema = z.object({ reward: z.number().finite(), success: z.boolean().optional() });

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { sampler, modelName = 'agentrl', host = '127.0.0.1', port = 0, sessionTimeoutMs = 120_000, openUnknownSessions = true } = options;
  const endpoints = createPolicyEndpoints({
    generate: policyGenerator(sampler),
    tokenizer: sampler.tokenizer,
    contextWindow: sampler.contextWindow,
    modelName,
    batchWindowMs: options.batchWindowMs,
    maxBatchSize: options.maxBatchSize,
  });
  const store = new SessionStore({ timeoutMs: sessionTimeoutMs });
  const sweeper = setInterval(() => store.sweep(), Math.max(10, Math.min(1000, sessionTimeoutMs / 4)));
  sweeper.unref();
  const prefixBreaks = (calls: FinishedSession['calls']) => joinCalls(calls).prefixBreaks;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = pathOf(request);
    const method = request.method ?? 'GET';
    if (method === 'POST' && path === '/v1/chat/completions') return chat(request, response);
    const session = /^\/v1\/sessions\/([^/]+)(\/reward)?$/.exec(path);
    if (session !== null) return sessionRoute(method, decodeURIComponent(session[1]!), session[2] !== undefined, request, response);
    if (method === 'GET') return endpoints.handle(request, response);
    throw new RequestError(404, `${method} ${path} not found; the gateway serves POST /v1/chat/completions, POST /v1/sessions/{id}/reward, GET /v1/sessions/{id}, GET /v1/models`);
  }

  async function chat(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await endpoints.readBody(request, chatRequestSchema);
    const named = sessionIdOf(request.headers, body);
    if (!named.ok) throw new RequestError(400, named.message, named.param, 'missing_session_id');
    if ((body.n ?? 1) !== 1) throw new RequestError(400, 'the gateway records one reply per call: n must be 1', 'n');
    const messages = toMessages(body.messages); // a malformed tool call is a 400 before any sampling
    const session = store.get(named.id) ?? openOnCall(named.id);
    const { temperature, maxTokens } = session.settings;
    const requested = body.max_completion_tokens ?? body.max_tokens ?? undefined;
    const sampled = {
      ...body,
      ...(temperature === undefined ? {} : { temperature }),
      max_tokens: undefined,
      max_completion_tokens: maxTokens === undefined ? requested : Math.min(requested ?? maxTokens, maxTokens),
    };
    session.inFlight++;
    store.touch(session);
    response.once('close', () => {
      if (!response.writableFinished) store.metrics.callsAbandoned++;
    });
    try {
      await endpoints.chat(sampled, response, (call: FinishedChat) => store.record(session, { messages, prompt: call.prompt, ...call.choices[0]! }));
    } finally {
      session.inFlight--;
      store.touch(session);
    }
  }

  function openOnCall(id: string): Session {
    if (store.hasEnded(id)) throw new RequestError(409, `session '${id}' has ended (finished, scored or timed out); start a new session id`, null, 'session_ended');
    if (!openUnknownSessions) throw new RequestError(404, `no session '${id}' is open; the trainer opens sessions (gatewayCollect)`, null, 'session_not_found');
    return store.open(id, {}, false);
  }

  async function sessionRoute(method: string, id: string, reward: boolean, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const session = store.get(id);
    if (session === undefined) throw new RequestError(404, `no session '${id}' is open${store.hasEnded(id) ? ' (it has ended)' : ''}`, null, 'session_not_found');
    if (!reward && method === 'GET') return sendJson(response, 200, sessionSummary(session));
    if (!reward || method !== 'POST') throw new RequestError(405, `${method} ${pathOf(request)}: use POST /v1/sessions/{id}/reward or GET /v1/sessions/{id}`);
    const body = await readJsonBody(request);
    if (!body.ok) throw new RequestError(400, body.message);
    const parsed = rewardSchema.safeParse(body.value);
    if (!parsed.success) throw new RequestError(400, `expected {"reward": <finite number>, "success"?: <boolean>}: ${z.prettifyError(parsed.error)}`, String(parsed.error.issues[0]!.path[0] ?? 'reward'));
    session.reward = { reward: parsed.data.reward, success: parsed.data.success ?? parsed.data.reward > 0 };
    store.touch(session);
    return sendJson(response, 200, sessionSummary(session));
  }

  function sessionSummary(session: Session) {
    return { id: session.id, object: 'agentrl.session', calls: session.calls.length, prefixBreaks: joinCalls(session.calls).prefixBreaks, reward: session.reward ?? null };
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => respondWithError(response, error));
  });
  const boundPort = await listen(server, port, host);
  const url = baseUrl(host, boundPort);
  return {
    url,
    baseURL: `${url}/v1`,
    openSession: (id, settings) => store.open(id, settings),
    finishSession: (id) => store.finish(id, prefixBreaks),
    dropSession: (id, reason) => store.drop(id, reason),
    takeRewardedSessions: () => store.rewardedUnowned().flatMap((session) => store.finish(session.id, prefixBreaks) ?? []),
    metrics: () => ({ ...store.metrics }),
    close: async () => {
      clearInterval(sweeper);
      store.dropAll('closed'); // counted; client-scored sessions not yet taken are dropped too
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
