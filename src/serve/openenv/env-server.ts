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
 * A client's `task` (reset, MCP session/create) is checked against the env's `taskSchema`
 * (client-task.ts): invalid → 422 / VALIDATION_ERROR; an env without a schema takes none unless
 * `allowClientTasks`. A closed socket, or an HTTP client gone mid-call, closes its env, and
 * `env.close()` kills the work it has in flight (the code envs' sandbox runs).
 * No message or request can stop the server: whatever throws while handling one (a hostile key,
 * a throwing env, a result JSON cannot encode) is an error to that session or request only; a
 * frame over 8 MiB closes its socket with 1009. Free-form objects (metadata, tool arguments, MCP
 * params) accept any key, `constructor` and `__proto__` included (../json-object.ts).
 *
 * One Hono app serves it all: the WebSocket routes (socket-sessions.ts, upgraded through
 * @hono/node-server with a `ws` server) and the HTTP routes (http-routes.ts), one handler each.
 */
import { WebSocketServer } from 'ws';
import { InvalidArgumentError } from '../../core/errors.ts';
import type { Env } from '../../core/types.ts';
import { listenApp, serverApp } from '../hono-server.ts';
import { addEnvHttpRoutes } from './http-routes.ts';
import { describeTools } from './mcp.ts';
import { closeEnv, McpSessions } from './mcp-sessions.ts';
import { docsPage, openApiDocument } from './openapi.ts';
import { SocketSessions } from './socket-sessions.ts';
import { wireSchemas } from './wire.ts';

export type { WsErrorCode } from './socket-messages.ts';

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
  /**
   * Pass a client's `task` (reset, MCP session/create) unchecked to an env that declares no
   * `taskSchema`. Default false: such an env takes no client task (client-task.ts); an env with a
   * schema always gets the task checked against it.
   */
  allowClientTasks?: boolean;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8000; 0 = any free port. */
  port?: number;
  /** Web pages (scheme://host[:port]) allowed to call besides the server's own origin; other Origins are refused 403. Default none. */
  allowedOrigins?: string[];
}

export interface EnvServer {
  url: string;
  port: number;
  /** Open sessions now (WebSocket and HTTP MCP). */
  activeSessions(): number;
  /** Closes every session and stops listening. */
  close(): Promise<void>;
}

export async function startEnvServer(options: EnvServerOptions): Promise<EnvServer> {
  const { env: makeEnv, maxSessions = 64, sessionTimeoutS = 300, host = '127.0.0.1', port = 8000 } = options;
  const allowClientTasks = options.allowClientTasks ?? false;
  if (!Number.isInteger(maxSessions) || maxSessions < 1)
    throw new InvalidArgumentError(`maxSessions must be a positive integer, got ${maxSessions}`);
  if (!(sessionTimeoutS >= 0))
    throw new InvalidArgumentError(`sessionTimeoutS must be >= 0 (0 = no timeout), got ${sessionTimeoutS}`);
  const probe = makeEnv();
  const name = options.name ?? probe.name;
  const description = options.description ?? `agentrl environment ${name}`;
  const readme = [
    `# ${name}`,
    '',
    description,
    '',
    '## Instructions (system prompt)',
    '',
    probe.instructions ?? '(none)',
    '',
    options.readme ?? '',
  ]
    .join('\n')
    .trim();
  const info = {
    name,
    description,
    instructions: probe.instructions ?? null,
    tools: describeTools(probe.tools ?? []),
    max_sessions: maxSessions,
    session_timeout_s: sessionTimeoutS === 0 ? null : sessionTimeoutS,
  };
  await closeEnv(probe);
  // The WebSocket and the HTTP MCP sessions count against maxSessions together.
  const load = (): { active: number; max: number } => ({ active: sockets.size + mcpSessions.size, max: maxSessions });
  const mcpSessions = new McpSessions({
    serverName: name,
    makeEnv,
    sessionTimeoutS,
    load: () => load(),
    allowClientTasks,
  });
  const sockets = new SocketSessions({ name, makeEnv, maxSessions, sessionTimeoutS, mcpSessions, allowClientTasks });

  const app = serverApp();
  app.get('/ws', sockets.openEnvRoute());
  app.get('/mcp', sockets.mcpRoute());
  addEnvHttpRoutes(app, {
    makeEnv,
    mcpSessions,
    documents: {
      metadata: { name, description, readme_content: readme, version: '0.1.0', author: 'agentrl' },
      schema: wireSchemas(),
      info,
      openApi: openApiDocument({ name, description }),
    },
    docsPage: docsPage({ name, description }),
    allowClientTasks,
  });
  const websocket = new WebSocketServer({ noServer: true, maxPayload: 8 * 1024 * 1024 });
  const listening = await listenApp(app, { host, port, websocket, allowedOrigins: options.allowedOrigins });
  return {
    url: listening.url,
    port: listening.port,
    activeSessions: () => load().active,
    close: async () => {
      sockets.terminateAll();
      websocket.close();
      await mcpSessions.closeAll();
      await listening.close();
    },
  };
}
