/**
 * The training gateway: an OpenAI-compatible chat-completions server that records every call as
 * token ids and log-probs, per session, so an agent written with any framework (the Vercel AI SDK,
 * the `openai` SDK, LangChain.js, Mastra) is trained by pointing its base URL here, unchanged.
 *
 *   POST /v1/chat/completions        as `serve-policy` (streaming, tools in the model's format,
 *                                    logprobs); the call names its session (session-id.ts):
 *                                    header `x-session-id`, model `agentrl/<session>` or `user`;
 *                                    a session a client opened takes later calls only with its
 *                                    secret (its API key or `x-session-secret`: session-secret.ts)
 *   POST /v1/sessions/{id}/reward    {"reward": number, "success"?: boolean} — scores the session
 *                                    once; the reward finite and inside `rewardRange` (posted-reward.ts)
 *   GET  /v1/sessions/{id}           {id, calls, prefixBreaks, reward}
 *   GET  /v1/models, /health
 *
 * Each call is recorded once its whole response has reached the client's socket: a client that
 * disconnects mid-stream leaves no half-recorded call (counted as `callsAbandoned`). Calls of one
 * session join into one trajectory by exact prefix continuation (session-trajectory.ts). A
 * session idle for `sessionTimeoutMs` (no call in flight) is dropped and counted. The sampler is
 * any `Policy` (a built-in one streams token by token, through `generateBatch`'s optional `onToken`;
 * see ../openai/policy-generator.ts, the generation path serve-policy shares); a session opened by the trainer samples at the trainer's temperature whatever
 * the client asks (old log-probs must be of that distribution), and its reply budget is capped.
 * `n` > 1 is refused (a session continues one reply). Errors are OpenAI-shaped. Prompts, stop ids
 * and tool calls are in the sampler's own chat format (`sampler.chatFormat`) when it has one. The
 * routes are gateway-routes.ts.
 */
import type { ChatFormat } from '../../chat/chat-format.ts';
import type { Policy } from '../../policy/types.ts';
import { listenApp, type ListeningApp } from '../hono-server.ts';
import { createPolicyContext } from '../openai/policy-context.ts';
import type { RequestLimitsInput } from '../openai/request-limits.ts';
import { gatewayApp } from './gateway-routes.ts';
import { parseRewardRange, type RewardRangeInput } from './posted-reward.ts';
import {
  SessionStore,
  type FinishedSession,
  type GatewayMetrics,
  type Session,
  type SessionSettings,
  type DropReason,
} from './session-store.ts';
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
  /** Web pages (scheme://host[:port]) allowed to call besides the server's own origin; other Origins are refused 403. Default none. */
  allowedOrigins?: string[];
  /** Milliseconds without a call before an unfinished session is dropped. Default 120 000. */
  sessionTimeoutMs?: number;
  /** A call naming a session nobody opened opens it (an agent outside `gatewayCollect`), for that client only (session-secret.ts). Default true. */
  openUnknownSessions?: boolean;
  /** The rewards a client may post to /v1/sessions/{id}/reward (rewardRangeSchema). Default { min: -1e6, max: 1e6 }. */
  rewardRange?: RewardRangeInput;
  /** Milliseconds the batcher waits for more calls to batch. Default 10. */
  batchWindowMs?: number;
  /** Rows per batch at most. Default 64. */
  maxBatchSize?: number;
  /** What one chat request may hold (body bytes, messages, tools…; ../openai/request-limits.ts); each field has a default. */
  requestLimits?: RequestLimitsInput;
  /** The chat format prompts are rendered in. Default: the sampler's own (`sampler.chatFormat`), else agentrl's byte template. */
  chatFormat?: ChatFormat;
}

export interface Gateway {
  /** Server root, e.g. http://127.0.0.1:43121. */
  url: string;
  /** What clients use as their base URL: `${url}/v1`. */
  baseURL: string;
  /**
   * Opens a session for an agent run; its calls are recorded until `finishSession` or `dropSession`.
   * Whoever knows `id` can call in it and post its reward (once): make it unguessable (gatewayCollect's are 128 random bits).
   */
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

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const {
    sampler,
    modelName = 'agentrl',
    host = '127.0.0.1',
    port = 0,
    sessionTimeoutMs = 120_000,
    openUnknownSessions = true,
  } = options;
  const rewardRange = parseRewardRange(options.rewardRange); // a bad range fails here, before listening
  const context = createPolicyContext({
    policy: sampler,
    ...(options.chatFormat === undefined ? {} : { chatFormat: options.chatFormat }),
    modelName,
    batchWindowMs: options.batchWindowMs,
    maxBatchSize: options.maxBatchSize,
    requestLimits: options.requestLimits,
  });
  const store = new SessionStore({ timeoutMs: sessionTimeoutMs });
  const sweeper = setInterval(() => store.sweep(), Math.max(10, Math.min(1000, sessionTimeoutMs / 4)));
  sweeper.unref();
  const prefixBreaks = (calls: FinishedSession['calls']) => joinCalls(calls).prefixBreaks;
  let listening: ListeningApp;
  try {
    listening = await listenApp(gatewayApp({ context, store, openUnknownSessions, rewardRange }), {
      host,
      port,
      allowedOrigins: options.allowedOrigins,
    });
  } catch (error) {
    clearInterval(sweeper);
    throw error;
  }
  const { url, close } = listening;
  return {
    url,
    baseURL: `${url}/v1`,
    openSession: (id, settings) => store.open(id, settings),
    finishSession: (id) => store.finish(id, prefixBreaks),
    dropSession: (id, reason) => store.drop(id, reason),
    takeRewardedSessions: () =>
      store.rewardedUnowned().flatMap((session) => store.finish(session.id, prefixBreaks) ?? []),
    metrics: () => ({ ...store.metrics }),
    close: async () => {
      clearInterval(sweeper);
      store.dropAll('closed'); // counted; client-scored sessions not yet taken are dropped too
      await close();
      await context.batcher.close(); // the running batch ends (its clients are cut); the sampler stays the caller's
    },
  };
}
