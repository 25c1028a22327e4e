/**
 * An agentrl environment served over the OpenEnv protocol (../shared/notes/openenv-protocol.md),
 * so distributed trainers (TRL, SkyRL, torchforge) and OpenEnv's own clients (openenv-core's
 * GenericEnvClient, MCPToolClient; `openenv validate`) can use it.
 *
 *   const server = await startEnvServer({ env: () => makeEnv('frozen-lake'), name: 'frozen-lake', port: 8000 });
 *   // POST /reset {"seed": 3}   POST /step {"action": {"text": "<answer>Right</answer>"}}   WS /ws
 *
 * HTTP (as in OpenEnv, stateless: every call builds a fresh environment and closes it):
 *   POST /reset   {seed?, episode_id?, task?}          → {observation, reward: null, done}
 *   POST /step    {action, timeout_s?, request_id?, seed?} → the first step of the episode of `seed`
 *                 (default 0); a body or action that does not validate → 422 {detail: [...]}
 *   GET  /state   {episode_id, step_count, …}   GET /health {"status":"healthy"}
 *   GET  /metadata {name, description, readme_content, version, author}
 *   GET  /schema  {action, observation, state} (JSON Schemas from the zod schemas in wire.ts)
 *   POST /mcp     JSON-RPC 2.0: tools/list, tools/call, openenv/session/create|close (mcp.ts, mcp-sessions.ts)
 *   GET  /openapi.json, /docs   the API (openapi.ts)
 *   GET  /agentrl/env  agentrl extension: {name, instructions, tools, max_sessions, …} for RemoteEnvPool
 * An action is agentrl's `{text, tool_call?}` or OpenEnv's `{"type":"list_tools"}` /
 * `{"type":"call_tool",…}` (session.ts); the env's info travels in `observation.metadata` (wire.ts).
 * WebSocket /ws: one environment instance per connection, messages handled in order:
 *   → {"type":"reset","data":{…}} {"type":"step","data":{action}} {"type":"state"} {"type":"close"} {"type":"mcp","data":{jsonrpc}}
 *   ← {"type":"observation","data":{observation, reward, done}} {"type":"state","data":{…}}
 *     {"type":"mcp","data":{jsonrpc}} {"type":"error","data":{"message","code"}}
 *   codes: INVALID_JSON, UNKNOWN_TYPE, VALIDATION_ERROR, EXECUTION_ERROR (the env threw, e.g. a
 *   step after the episode ended), CAPACITY_REACHED (more than `maxSessions` sessions; the
 *   socket is then closed), FACTORY_ERROR (the env could not be built), SESSION_ERROR (idle
 *   timeout: the session is closed after `sessionTimeoutS` seconds without a message).
 * WebSocket /mcp: JSON-RPC 2.0 messages, one environment instance per connection (its episode of
 *   seed 0); refusals and the idle timeout are JSON-RPC errors -32000 with `data.code` as above.
 * `maxSessions` bounds the WebSocket and HTTP MCP sessions together.
 * No message or request can stop the server: whatever throws while handling one (a hostile key,
 * a throwing env, a result JSON cannot encode) is an error to that session or request only; a
 * frame over 8 MiB closes its socket with 1009. Free-form objects (metadata, tool arguments, MCP
 * params) accept any key, `constructor` and `__proto__` included (../json-object.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { z } from 'zod';
import { AgentRlError, InvalidArgumentError } from '../../core/errors.ts';
import type { Env } from '../../core/types.ts';
import { baseUrl, BodyTooLargeError, errorMessage, listen, pathOf, readJsonBody, sendJson } from '../http.ts';
import { describeTools, jsonRpcError, jsonRpcErrorCodes } from './mcp.ts';
import { closeEnv, McpSessions } from './mcp-sessions.ts';
import { docsPage, openApiDocument } from './openapi.ts';
import { EnvSession } from './session.ts';
import { actionSchema, mcpActionSchema, resetRequestSchema, stepActionSchema, stepRequestSchema, validationDetail, wireSchemas, type McpAction } from './wire.ts';

export interface EnvServerOptions {
  /** Builds one environment instance (one per WebSocket session and per HTTP call). */
  env: () => Env;
  /** Default: the env's own name. */
  name?: string;
  description?: string;
  /** Extra README text for `/metadata` (actions, reward). */
  readme?: string;
  /** Concurrent sessions at most (WebSocket /ws and /mcp, HTTP MCP sessions); one more is answered CAPACITY_REACHED. Default 64. */
  maxSessions?: number;
  /** Seconds a session may stay silent before the server closes it (SESSION_ERROR). Default 300; 0 = never. */
  sessionTimeoutS?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8000; 0 = any free port. */
  port?: number;
}

export interface EnvServer {
  url: string;
  port: number;
  /** Open sessions now (WebSocket and HTTP MCP). */
  activeSessions(): number;
  /** Closes every session and stops listening. */
  close(): Promise<void>;
}

export type WsErrorCode = 'INVALID_JSON' | 'UNKNOWN_TYPE' | 'VALIDATION_ERROR' | 'EXECUTION_ERROR' | 'CAPACITY_REACHED' | 'FACTORY_ERROR' | 'SESSION_ERROR';

const resetMessageSchema = z.strictObject({ type: z.literal('reset'), data: resetRequestSchema.default({}) });
const stepMessageSchema = z.strictObject({ type: z.literal('step'), data: actionSchema });
const mcpStepMessageSchema = z.strictObject({ type: z.literal('step'), data: mcpActionSchema });
const stateMessageSchema = z.strictObject({ type: z.literal('state') });
const closeMessageSchema = z.strictObject({ type: z.literal('close') });
const mcpMessageSchema = z.strictObject({ type: z.literal('mcp'), data: z.unknown() });
/** A Map, not an object literal: a message type such as "constructor" or "toString" must not find Object.prototype's. */
const messageSchemas = new Map<string, z.ZodType>([
  ['reset', resetMessageSchema],
  ['step', stepMessageSchema],
  ['state', stateMessageSchema],
  ['close', closeMessageSchema],
  ['mcp', mcpMessageSchema],
]);

export async function startEnvServer(options: EnvServerOptions): Promise<EnvServer> {
  const { env: makeEnv, maxSessions = 64, sessionTimeoutS = 300, host = '127.0.0.1', port = 8000 } = options;
  if (!Number.isInteger(maxSessions) || maxSessions < 1) throw new InvalidArgumentError(`maxSessions must be a positive integer, got ${maxSessions}`);
  if (!(sessionTimeoutS >= 0)) throw new InvalidArgumentError(`sessionTimeoutS must be >= 0 (0 = no timeout), got ${sessionTimeoutS}`);
  const probe = makeEnv();
  const name = options.name ?? probe.name;
  const tools = probe.tools ?? [];
  const description = options.description ?? `agentrl environment ${name}`;
  const readme = [`# ${name}`, '', description, '', '## Instructions (system prompt)', '', probe.instructions ?? '(none)', '', options.readme ?? ''].join('\n').trim();
  const schemas = wireSchemas();
  const info = {
    name,
    description,
    instructions: probe.instructions ?? null,
    tools: describeTools(tools),
    max_sessions: maxSessions,
    session_timeout_s: sessionTimeoutS === 0 ? null : sessionTimeoutS,
  };
  await closeEnv(probe);
  const sockets = new Set<WebSocket>();
  const load = (): { active: number; max: number } => ({ active: sockets.size + mcpSessions.size, max: maxSessions });
  const mcpSessions = new McpSessions({ serverName: name, makeEnv, sessionTimeoutS, load });
  const apiDocument = openApiDocument({ name, description });
  const docs = docsPage({ name, description });

  async function handleHttp(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = pathOf(request);
    const method = request.method ?? 'GET';
    const routes: Record<string, Record<string, () => Promise<void> | void>> = {
      '/health': { GET: () => sendJson(response, 200, { status: 'healthy' }) },
      '/metadata': { GET: () => sendJson(response, 200, { name, description, readme_content: readme, version: '0.1.0', author: 'agentrl' }) },
      '/schema': { GET: () => sendJson(response, 200, schemas) },
      '/state': { GET: () => withFreshSession(async (session) => sendJson(response, 200, session.state())) },
      '/agentrl/env': { GET: () => sendJson(response, 200, info) },
      '/reset': { POST: () => httpReset(request, response) },
      '/step': { POST: () => httpStep(request, response) },
      '/mcp': { POST: () => httpMcp(request, response) },
      '/openapi.json': { GET: () => sendJson(response, 200, apiDocument) },
      '/docs': { GET: () => void response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(docs) },
    };
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (route === undefined) return sendJson(response, 404, { detail: `Not Found: ${path}; endpoints: ${Object.keys(routes).join(', ')}; WebSocket: /ws, /mcp` });
    const handler = Object.hasOwn(route, method) ? route[method] : undefined;
    if (handler === undefined) return sendJson(response, 405, { detail: `Method Not Allowed: ${method} ${path}; allowed: ${Object.keys(route).join(', ')}` });
    await handler();
  }

  async function httpReset(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readJsonBody(request, {});
    if (!body.ok) return sendJson(response, 422, { detail: [{ type: 'json_invalid', loc: ['body'], msg: body.message }] });
    const parsed = resetRequestSchema.safeParse(body.value);
    if (!parsed.success) return sendJson(response, 422, { detail: validationDetail(parsed.error, ['body']) });
    await withFreshSession(async (session) => sendJson(response, 200, await session.reset(parsed.data)));
  }

  async function httpStep(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readJsonBody(request);
    if (!body.ok) return sendJson(response, 422, { detail: [{ type: 'json_invalid', loc: ['body'], msg: body.message }] });
    const parsed = stepRequestSchema.safeParse(body.value);
    if (!parsed.success) return sendJson(response, 422, { detail: validationDetail(parsed.error, ['body']) });
    const action = stepActionSchema(parsed.data.action).safeParse(parsed.data.action);
    if (!action.success) return sendJson(response, 422, { detail: validationDetail(action.error, ['body', 'action']) });
    await withFreshSession(async (session) => {
      await session.reset({ seed: parsed.data.seed ?? 0 });
      sendJson(response, 200, await session.step(action.data));
    });
  }

  /** Runs a stateless HTTP call on a fresh env, closed afterwards. */
  async function withFreshSession(use: (session: EnvSession) => Promise<void>): Promise<void> {
    const session = new EnvSession(makeEnv());
    try {
      await use(session);
    } finally {
      await closeEnv(session.env);
    }
  }

  async function httpMcp(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readJsonBody(request);
    if (!body.ok) return sendJson(response, 200, jsonRpcError(null, jsonRpcErrorCodes.parseError, `Parse error: ${body.message}`));
    const answer = await mcpSessions.handle(body.value);
    if (answer === null) {
      response.writeHead(202).end();
      return;
    }
    sendJson(response, 200, answer);
  }

  // Every failure of a handler (a throwing env or factory, a result JSON cannot encode, a client
  // gone mid-body) is an HTTP error for that request only; nothing escapes to the process.
  const httpServer = createServer((request, response) => {
    handleHttp(request, response).catch((error: unknown) => {
      try {
        if (response.headersSent) return response.destroy();
        if (error instanceof BodyTooLargeError) return sendJson(response, 413, { detail: error.message });
        if (error instanceof AgentRlError) return sendJson(response, 400, { detail: error.message, code: error.code });
        sendJson(response, 500, { detail: errorMessage(error) });
      } catch {
        response.destroy();
      }
    });
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 8 * 1024 * 1024 });
  const protocols = new Map<string, SocketProtocol>([
    ['/ws', { notify: sendError, answer: handleMessage }],
    ['/mcp', { notify: sendMcpError, answer: answerMcpMessage }],
  ]);
  httpServer.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const protocol = protocols.get(pathOf(request));
    if (protocol === undefined) {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => openSession(ws, protocol));
  });

  function sendError(ws: WebSocket, code: WsErrorCode, message: string, extra: Record<string, unknown> = {}): void {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(JSON.stringify({ type: 'error', data: { message, code, ...extra } }));
  }

  /** On the WebSocket /mcp, a refusal or the idle timeout is a JSON-RPC error (id null) with the /ws code in `data.code`. */
  function sendMcpError(ws: WebSocket, code: WsErrorCode, message: string, extra: Record<string, unknown> = {}): void {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(JSON.stringify(jsonRpcError(null, jsonRpcErrorCodes.serverError, message, { code, ...extra })));
  }

  function openSession(ws: WebSocket, protocol: SocketProtocol): void {
    const { active } = load();
    if (active >= maxSessions) {
      protocol.notify(ws, 'CAPACITY_REACHED', `server at capacity: ${active} of ${maxSessions} sessions active; retry later or raise --max-sessions`, {
        active_sessions: active,
        max_sessions: maxSessions,
      });
      ws.close(1013, 'capacity reached');
      return;
    }
    let session: EnvSession;
    try {
      session = new EnvSession(makeEnv());
    } catch (error) {
      protocol.notify(ws, 'FACTORY_ERROR', `cannot build environment ${name}: ${errorMessage(error)}`);
      ws.close(1011, 'factory error');
      return;
    }
    sockets.add(ws);
    let timer: NodeJS.Timeout | undefined;
    const touch = (): void => {
      if (sessionTimeoutS === 0) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        protocol.notify(ws, 'SESSION_ERROR', `session idle for ${sessionTimeoutS} s; closed`);
        ws.close(1000, 'idle timeout');
      }, sessionTimeoutS * 1000);
    };
    touch();
    let queue = Promise.resolve();
    ws.on('message', (raw: RawData) => {
      touch();
      // the protocol answers its own failures; should even that fail, only this socket goes.
      queue = queue.then(() => protocol.answer(ws, session, raw)).catch(() => ws.terminate());
    });
    ws.on('close', () => {
      clearTimeout(timer);
      sockets.delete(ws);
      void closeEnv(session.env);
    });
    // ws has already started closing (a frame over maxPayload: close 1009; a socket error: destroyed);
    // terminating here would cut the close frame off and the client would see 1006.
    ws.on('error', () => {});
  }

  /** Answers one /ws message; whatever throws becomes an error message to this session only. */
  async function handleMessage(ws: WebSocket, session: EnvSession, raw: RawData): Promise<void> {
    if (ws.readyState !== ws.OPEN) return;
    try {
      await answerMessage(ws, session, raw);
    } catch (error) {
      const code = error instanceof AgentRlError ? { error_code: error.code } : {};
      sendError(ws, 'EXECUTION_ERROR', errorMessage(error), code);
    }
  }

  async function answerMessage(ws: WebSocket, session: EnvSession, raw: RawData): Promise<void> {
    let message: unknown;
    try {
      message = JSON.parse(rawText(raw));
    } catch (error) {
      return sendError(ws, 'INVALID_JSON', `Invalid JSON: ${errorMessage(error)}`);
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      return sendError(ws, 'VALIDATION_ERROR', 'a message is a JSON object {"type": ..., "data": ...}');
    }
    const type = (message as { type?: unknown }).type;
    let schema = typeof type === 'string' ? messageSchemas.get(type) : undefined;
    if (schema === undefined) return sendError(ws, 'UNKNOWN_TYPE', `Unknown message type: ${describeType(type)}; types: ${[...messageSchemas.keys()].join(', ')}`);
    if (type === 'step' && stepActionSchema((message as { data?: unknown }).data) !== actionSchema) schema = mcpStepMessageSchema;
    const parsed = schema.safeParse(message);
    if (!parsed.success) {
      return sendError(ws, 'VALIDATION_ERROR', `invalid ${String(type)} message: ${z.prettifyError(parsed.error)}`, {
        errors: validationDetail(parsed.error, []),
      });
    }
    // A throwing env (e.g. a step after the episode ended) or an answer JSON cannot encode: EXECUTION_ERROR (handleMessage).
    const valid = parsed.data as { type: string; data?: unknown };
    if (valid.type === 'reset') ws.send(JSON.stringify({ type: 'observation', data: await session.reset(valid.data as z.output<typeof resetRequestSchema>) }));
    else if (valid.type === 'step') ws.send(JSON.stringify({ type: 'observation', data: await session.step(valid.data as z.output<typeof actionSchema> | McpAction) }));
    else if (valid.type === 'state') ws.send(JSON.stringify({ type: 'state', data: session.state() }));
    else if (valid.type === 'close') ws.close(1000, 'closed by client');
    else {
      const answer = await mcpSessions.handle(valid.data, { session, startsEpisode: false });
      if (answer !== null) ws.send(JSON.stringify({ type: 'mcp', data: answer }));
    }
  }

  /** Answers one WebSocket /mcp message (JSON-RPC) with the socket's env; never throws but for a closed socket. */
  async function answerMcpMessage(ws: WebSocket, session: EnvSession, raw: RawData): Promise<void> {
    if (ws.readyState !== ws.OPEN) return;
    let message: unknown;
    try {
      message = JSON.parse(rawText(raw));
    } catch (error) {
      ws.send(JSON.stringify(jsonRpcError(null, jsonRpcErrorCodes.parseError, `Parse error: ${errorMessage(error)}`)));
      return;
    }
    const answer = await mcpSessions.handle(message, { session, startsEpisode: true });
    if (answer === null) return;
    try {
      ws.send(JSON.stringify(answer));
    } catch (error) {
      const id = 'id' in answer ? answer.id : null;
      ws.send(JSON.stringify(jsonRpcError(id, jsonRpcErrorCodes.internalError, `Internal error: ${errorMessage(error)}`)));
    }
  }

  const boundPort = await listen(httpServer, port, host);
  return {
    url: baseUrl(host, boundPort),
    port: boundPort,
    activeSessions: () => load().active,
    close: async () => {
      for (const ws of sockets) ws.terminate();
      wss.close();
      await mcpSessions.closeAll();
      const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      httpServer.closeAllConnections();
      await closed;
    },
  };
}

/** How one WebSocket path talks: how it tells the client of a refusal or timeout, and how it answers a message. */
interface SocketProtocol {
  notify(ws: WebSocket, code: WsErrorCode, message: string, extra?: Record<string, unknown>): void;
  answer(ws: WebSocket, session: EnvSession, raw: RawData): Promise<void>;
}

/** A message's text (ws gives a Buffer, or for other binary types an ArrayBuffer or fragments). */
function rawText(raw: RawData): string {
  if (Buffer.isBuffer(raw)) return raw.toString('utf8');
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  return Buffer.from(raw).toString('utf8');
}

/** A message's `type` for an error message: a (shortened) string, or the kind of value it is. */
function describeType(type: unknown): string {
  if (typeof type === 'string') return JSON.stringify(type.length > 80 ? `${type.slice(0, 80)}…` : type);
  if (type === undefined) return 'none';
  return `a ${type === null ? 'null' : Array.isArray(type) ? 'array' : typeof type} (a type is a string)`;
}
