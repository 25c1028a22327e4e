/**
 * The env server's HTTP endpoints as Hono routes, one handler each (OpenEnv's HTTP is stateless:
 * every call builds a fresh environment and closes it). A path the server does not serve is 404,
 * a known path with another method 405, both `{detail}` naming what is served; a failing handler
 * answers `{detail}` through ../error-bodies.ts.
 */
import type { Hono } from 'hono';
import type { Env } from '../../core/types.ts';
import { openEnvErrorResponse } from '../error-bodies.ts';
import { jsonResponse, readJson, requestPath, type ServerContext, type ServerEnv } from '../hono-server.ts';
import { jsonRpcError, jsonRpcErrorCodes } from './mcp.ts';
import { closeEnv, type McpSessions } from './mcp-sessions.ts';
import { ClientTaskError } from './client-task.ts';
import { EnvSession } from './session.ts';
import { resetRequestSchema, stepActionSchema, stepRequestSchema, validationDetail } from './wire.ts';

export interface EnvHttpRoutesOptions {
  makeEnv: () => Env;
  mcpSessions: McpSessions;
  /** The GET answers that never change. */
  documents: { metadata: unknown; schema: unknown; info: unknown; openApi: unknown };
  /** The HTML of GET /docs. */
  docsPage: string;
  /** Pass a client's task unchecked to an env without a `taskSchema` (client-task.ts). */
  allowClientTasks: boolean;
}

type Handler = (c: ServerContext) => Promise<Response> | Response;

/** Adds the HTTP routes (the WebSocket routes are added before, so GET /ws and /mcp upgrade first). */
export function addEnvHttpRoutes(app: Hono<ServerEnv>, options: EnvHttpRoutesOptions): void {
  const { mcpSessions, documents, allowClientTasks } = options;
  const fresh: FreshSessions = (c, use) => withFreshSession(c, { makeEnv: options.makeEnv, allowClientTasks }, use);
  const routes: Record<string, Record<string, Handler>> = {
    '/health': { GET: () => jsonResponse(200, { status: 'healthy' }) },
    '/metadata': { GET: () => jsonResponse(200, documents.metadata) },
    '/schema': { GET: () => jsonResponse(200, documents.schema) },
    '/state': { GET: (c) => fresh(c, async (session) => jsonResponse(200, session.state())) },
    '/agentrl/env': { GET: () => jsonResponse(200, documents.info) },
    '/reset': { POST: (c) => reset(c, fresh) },
    '/step': { POST: (c) => step(c, fresh) },
    '/mcp': { POST: (c) => mcp(c, mcpSessions) },
    '/openapi.json': { GET: () => jsonResponse(200, documents.openApi) },
    '/docs': {
      GET: () =>
        new Response(options.docsPage, { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' } }),
    },
  };
  for (const [path, methods] of Object.entries(routes))
    for (const [method, handler] of Object.entries(methods)) app.on(method, path, handler);
  app.notFound((c) => {
    const path = requestPath(c);
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (route === undefined)
      return jsonResponse(404, {
        detail: `Not Found: ${path}; endpoints: ${Object.keys(routes).join(', ')}; WebSocket: /ws, /mcp`,
      });
    return jsonResponse(405, {
      detail: `Method Not Allowed: ${c.req.method} ${path}; allowed: ${Object.keys(route).join(', ')}`,
    });
  });
  app.onError((error) => openEnvErrorResponse(error));
}

/** POST /reset {seed?, episode_id?, task?} → {observation, reward: null, done}; a refused client task → 422. */
async function reset(c: ServerContext, fresh: FreshSessions): Promise<Response> {
  const body = await readJson(c, {});
  if (!body.ok) return jsonResponse(422, { detail: [{ type: 'json_invalid', loc: ['body'], msg: body.message }] });
  const parsed = resetRequestSchema.safeParse(body.value);
  if (!parsed.success) return jsonResponse(422, { detail: validationDetail(parsed.error, ['body']) });
  return fresh(c, async (session) => {
    try {
      return jsonResponse(200, await session.reset(parsed.data));
    } catch (error) {
      if (!(error instanceof ClientTaskError)) throw error;
      return jsonResponse(422, {
        detail: [{ type: 'task_refused', loc: ['body', 'task'], msg: error.message }],
        code: error.code,
      });
    }
  });
}

/** POST /step {action, seed?, …} → the first step of the episode of `seed` (default 0). */
async function step(c: ServerContext, fresh: FreshSessions): Promise<Response> {
  const body = await readJson(c);
  if (!body.ok) return jsonResponse(422, { detail: [{ type: 'json_invalid', loc: ['body'], msg: body.message }] });
  const parsed = stepRequestSchema.safeParse(body.value);
  if (!parsed.success) return jsonResponse(422, { detail: validationDetail(parsed.error, ['body']) });
  const action = stepActionSchema(parsed.data.action).safeParse(parsed.data.action);
  if (!action.success) return jsonResponse(422, { detail: validationDetail(action.error, ['body', 'action']) });
  return fresh(c, async (session) => {
    await session.reset({ seed: parsed.data.seed ?? 0 });
    return jsonResponse(200, await session.step(action.data));
  });
}

/** POST /mcp: one JSON-RPC message (a notification is answered 202 with no body). */
async function mcp(c: ServerContext, mcpSessions: McpSessions): Promise<Response> {
  const body = await readJson(c);
  if (!body.ok)
    return jsonResponse(200, jsonRpcError(null, jsonRpcErrorCodes.parseError, `Parse error: ${body.message}`));
  const answer = await mcpSessions.handle(body.value);
  if (answer === null) return new Response(null, { status: 202 });
  return jsonResponse(200, answer);
}

/** Runs a stateless HTTP call on a fresh env. */
type FreshSessions = (c: ServerContext, use: (session: EnvSession) => Promise<Response>) => Promise<Response>;

/**
 * Runs a stateless HTTP call on a fresh env, closed afterwards — or as soon as the client goes
 * away: closing the env kills its work in flight (a step's sandbox run).
 */
async function withFreshSession(
  c: ServerContext,
  { makeEnv, allowClientTasks }: { makeEnv: () => Env; allowClientTasks: boolean },
  use: (session: EnvSession) => Promise<Response>,
): Promise<Response> {
  const session = new EnvSession(makeEnv(), { allowClientTasks });
  const clientGone = (): void => void closeEnv(session.env);
  const signal = c.req.raw.signal;
  signal.addEventListener('abort', clientGone, { once: true });
  try {
    return await use(session);
  } finally {
    signal.removeEventListener('abort', clientGone);
    await closeEnv(session.env);
  }
}
