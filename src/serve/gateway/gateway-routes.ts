/**
 * The gateway's endpoints as Hono routes, one handler each:
 *
 *   POST /v1/chat/completions        the policy server's chat completion, recorded per session
 *                                    (a client's session only with its secret: session-secret.ts)
 *   POST /v1/sessions/{id}/reward    scores the session, once (posted-reward.ts)
 *   GET  /v1/sessions/{id}           its summary
 *   GET  /health, /v1/models, /v1/models/{id}   as serve-policy (../openai/policy-routes.ts)
 */
import type { Hono } from 'hono';
import { at } from '../../core/indexing.ts';
import { openAiErrorResponse, RequestError } from '../error-bodies.ts';
import { jsonResponse, readJson, requestPath, serverApp, type ServerContext, type ServerEnv } from '../hono-server.ts';
import { chatCompletion, type FinishedChat } from '../openai/chat-completions.ts';
import type { PolicyContext } from '../openai/policy-context.ts';
import { addModelRoutes, policyNotFound } from '../openai/policy-routes.ts';
import { chatRequestSchema, toMessages } from '../openai/protocol.ts';
import { postedReward, scoreOnce, type RewardRange } from './posted-reward.ts';
import { sessionIdOf } from './session-id.ts';
import {
  isSessionSecret,
  newSessionSecret,
  notSessionOwner,
  presentedSecret,
  secretHash,
  sessionSecretHeader,
} from './session-secret.ts';
import type { Session, SessionStore } from './session-store.ts';
import { joinCalls } from './session-trajectory.ts';

export interface GatewayRouteOptions {
  context: PolicyContext;
  store: SessionStore;
  /** A call naming a session nobody opened opens it. */
  openUnknownSessions: boolean;
  /** The rewards a client may post. */
  rewardRange: RewardRange;
}

export function gatewayApp(options: GatewayRouteOptions): Hono<ServerEnv> {
  const app = serverApp();
  app.post('/v1/chat/completions', (c) => recordedChat(c, options));
  app.all('/v1/sessions/:id/reward', (c) => scoreSession(c, options));
  app.all('/v1/sessions/:id', (c) => {
    const session = openSession(options.store, c.req.param('id'));
    if (c.req.method !== 'GET')
      throw new RequestError(
        405,
        `${c.req.method} ${requestPath(c)}: use POST /v1/sessions/{id}/reward or GET /v1/sessions/{id}`,
      );
    return jsonResponse(200, sessionSummary(session));
  });
  addModelRoutes(app, options.context);
  app.notFound((c) => {
    if (c.req.method === 'GET') return openAiErrorResponse(policyNotFound(c));
    return openAiErrorResponse(
      new RequestError(
        404,
        `${c.req.method} ${requestPath(c)} not found; the gateway serves POST /v1/chat/completions, POST /v1/sessions/{id}/reward, GET /v1/sessions/{id}, GET /v1/models`,
      ),
    );
  });
  app.onError((error) => openAiErrorResponse(error));
  return app;
}

/** POST /v1/chat/completions: a chat completion at the session's settings, recorded once its whole response has left. */
async function recordedChat(
  c: ServerContext,
  { context, store, openUnknownSessions }: GatewayRouteOptions,
): Promise<Response> {
  const body = await context.readBody(c, chatRequestSchema);
  const headers = c.env.incoming.headers;
  const named = sessionIdOf(headers, body);
  if (!named.ok) throw new RequestError(400, named.message, named.param, 'missing_session_id');
  if ((body.n ?? 1) !== 1) throw new RequestError(400, 'the gateway records one reply per call: n must be 1', 'n');
  const messages = toMessages(body.messages); // a malformed tool call is a 400 before any sampling
  const presented = presentedSecret(headers);
  const existing = store.get(named.id);
  if (existing?.secretHash !== undefined && !isSessionSecret(existing.secretHash, presented))
    throw notSessionOwner(named.id, 'calling in it');
  const opened: OpenedSession =
    existing === undefined ? openOnCall(store, named.id, openUnknownSessions, presented) : { session: existing };
  const { session } = opened;
  const { temperature, maxTokens } = session.settings;
  const requested = body.max_completion_tokens ?? body.max_tokens ?? undefined;
  const sampled = {
    ...body,
    ...(temperature === undefined ? {} : { temperature }),
    max_tokens: undefined,
    max_completion_tokens: maxTokens === undefined ? requested : Math.min(requested ?? maxTokens, maxTokens),
  };
  const outgoing = c.env.outgoing;
  session.inFlight++;
  store.touch(session);
  outgoing.once('close', () => {
    if (!outgoing.writableFinished) store.metrics.callsAbandoned++;
  });
  const settle = (): void => {
    session.inFlight--;
    store.touch(session);
  };
  try {
    const answer = await chatCompletion(context, sampled, outgoing, (call: FinishedChat) =>
      store.record(session, { messages, prompt: call.prompt, ...at(call.choices, 0, 'chat choices') }),
    );
    void answer.done.finally(settle);
    if (opened.issuedSecret !== undefined) answer.response.headers.set(sessionSecretHeader, opened.issuedSecret);
    return answer.response;
  } catch (error) {
    settle();
    if (existing === undefined) store.discardUnused(session); // a first call that failed opens nothing
    throw error;
  }
}

/** The session a call is recorded in, and the secret to answer when the gateway made one for it. */
interface OpenedSession {
  session: Session;
  issuedSecret?: string;
}

/** Opens a client's session: its secret is the one the call presented, or a new one answered in the response. */
function openOnCall(
  store: SessionStore,
  id: string,
  openUnknownSessions: boolean,
  presented: string | undefined,
): OpenedSession {
  if (store.hasEnded(id))
    throw new RequestError(
      409,
      `session '${id}' has ended (finished, scored or timed out); start a new session id`,
      null,
      'session_ended',
    );
  if (!openUnknownSessions)
    throw new RequestError(
      404,
      `no session '${id}' is open; the trainer opens sessions (gatewayCollect)`,
      null,
      'session_not_found',
    );
  const secret = presented ?? newSessionSecret();
  const session = store.open(id, {}, secretHash(secret));
  return presented === undefined ? { session, issuedSecret: secret } : { session };
}

function openSession(store: SessionStore, id: string): Session {
  const session = store.get(id);
  if (session === undefined)
    throw new RequestError(
      404,
      `no session '${id}' is open${store.hasEnded(id) ? ' (it has ended)' : ''}`,
      null,
      'session_not_found',
    );
  return session;
}

/** POST /v1/sessions/{id}/reward {"reward": number, "success"?: boolean}: validated, set once (posted-reward.ts). */
async function scoreSession(c: ServerContext, { store, rewardRange }: GatewayRouteOptions): Promise<Response> {
  const session = openSession(store, c.req.param('id') ?? '');
  if (c.req.method !== 'POST')
    throw new RequestError(
      405,
      `${c.req.method} ${requestPath(c)}: use POST /v1/sessions/{id}/reward or GET /v1/sessions/{id}`,
    );
  const body = await readJson(c);
  if (!body.ok) throw new RequestError(400, body.message);
  const score = postedReward(body.value, rewardRange);
  scoreOnce(session, score, presentedSecret(c.env.incoming.headers));
  store.touch(session);
  return jsonResponse(200, sessionSummary(session));
}

function sessionSummary(session: Session) {
  return {
    id: session.id,
    object: 'agentrl.session',
    calls: session.calls.length,
    prefixBreaks: joinCalls(session.calls).prefixBreaks,
    reward: session.reward ?? null,
  };
}
