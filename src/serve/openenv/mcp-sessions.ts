/**
 * Which env instance answers an MCP request, and OpenEnv's MCP sessions over HTTP
 * (`openenv/session/create|close`, what `MCPToolClient` in its HTTP mode opens):
 *
 *   → {"method":"openenv/session/create","params":{}}                ← {"result":{"session_id":"…"}}
 *   → {"method":"tools/call","params":{"name":…,"arguments":…,"session_id":"…"}}   that session's env
 *   → {"method":"openenv/session/close","params":{"session_id":"…"}} ← {"result":{"session_id":"…","closed":true}}
 *
 * - a request on a socket (`{"type":"mcp"}` on /ws, any message on the WebSocket /mcp) uses that
 *   socket's env; `openenv/session/create` there names it, and it cannot be closed by MCP;
 * - a `session_id` names an HTTP MCP session: its env lives until closed or silent for the
 *   server's idle timeout, and counts against `maxSessions` with the WebSocket sessions;
 * - without either, a fresh env answers the one request and is closed.
 * A tool works within an episode, so an MCP-only env (an HTTP session, the stateless call, the
 * WebSocket /mcp) starts the episode of seed 0 first; `openenv/session/create` takes `seed` and
 * `task` (agentrl extensions) for another. On /ws the client's own `reset` starts it.
 */
import { z } from 'zod';
import type { Env } from '../../core/types.ts';
import { errorMessage } from '../http.ts';
import {
  answerMcp,
  jsonRpcError,
  jsonRpcErrorCodes,
  needsTools,
  parseJsonRpc,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from './mcp.ts';
import { EnvSession } from './session.ts';
import { resetRequestSchema } from './wire.ts';

export interface McpSessionsOptions {
  serverName: string;
  makeEnv: () => Env;
  /** Seconds an HTTP MCP session may stay silent before it is closed; 0 = never. */
  sessionTimeoutS: number;
  /** Sessions open now on the whole server (WebSocket and MCP) and the most allowed. */
  load(): { active: number; max: number };
  /** Pass a client's task unchecked to an env without a `taskSchema` (client-task.ts). Default false. */
  allowClientTasks?: boolean;
}

/** The socket a request came on: its env answers. `startsEpisode`: start the seed-0 episode when it has none (the WebSocket /mcp). */
export interface SocketScope {
  session: EnvSession;
  startsEpisode: boolean;
}

interface HttpSession {
  session: EnvSession;
  timer?: NodeJS.Timeout;
}

const createParamsSchema = z.looseObject({ seed: resetRequestSchema.shape.seed, task: z.unknown().optional() });

export class McpSessions {
  private readonly sessions = new Map<string, HttpSession>();

  constructor(private readonly options: McpSessionsOptions) {}

  /** HTTP MCP sessions open now. */
  get size(): number {
    return this.sessions.size;
  }

  /** Answers one JSON-RPC message (null for a notification); never throws. */
  async handle(message: unknown, socket?: SocketScope): Promise<JsonRpcResponse | null> {
    const parsed = parseJsonRpc(message);
    if (parsed === null) return null;
    if ('response' in parsed) return parsed.response;
    const { request } = parsed;
    try {
      if (request.method === 'openenv/session/create')
        return socket ? success(request, { session_id: socket.session.id }) : await this.create(request);
      if (request.method === 'openenv/session/close') return await this.close(request, socket);
      if (!needsTools(request.method)) return await answerMcp(request, [], this.options.serverName);
      if (socket !== undefined) {
        if (socket.startsEpisode && !socket.session.started) await socket.session.reset({ seed: 0 });
        return await answerMcp(request, socket.session.env.tools ?? [], this.options.serverName);
      }
      if (request.params.session_id !== undefined) {
        const entry =
          typeof request.params.session_id === 'string' ? this.sessions.get(request.params.session_id) : undefined;
        if (entry === undefined)
          return jsonRpcError(
            request.id,
            jsonRpcErrorCodes.invalidParams,
            `Unknown session_id: ${JSON.stringify(request.params.session_id)}`,
          );
        this.touch(request.params.session_id as string, entry);
        return await answerMcp(request, entry.session.env.tools ?? [], this.options.serverName);
      }
      const session = new EnvSession(this.options.makeEnv());
      try {
        await session.reset({ seed: 0 });
        return await answerMcp(request, session.env.tools ?? [], this.options.serverName);
      } finally {
        await closeEnv(session.env);
      }
    } catch (error) {
      return jsonRpcError(request.id, jsonRpcErrorCodes.internalError, `Internal error: ${errorMessage(error)}`);
    }
  }

  /** Closes every HTTP MCP session (the server is stopping). */
  async closeAll(): Promise<void> {
    const entries = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(entries.map((entry) => this.release(entry)));
  }

  private async create(request: JsonRpcRequest): Promise<JsonRpcResponse> {
    const params = createParamsSchema.safeParse(request.params);
    if (!params.success)
      return jsonRpcError(
        request.id,
        jsonRpcErrorCodes.invalidParams,
        `Invalid params: ${z.prettifyError(params.error)}`,
      );
    const { active, max } = this.options.load();
    if (active >= max) {
      return jsonRpcError(
        request.id,
        jsonRpcErrorCodes.serverError,
        `server at capacity: ${active} of ${max} sessions active; retry later or raise --max-sessions`,
        { active_sessions: active, max_sessions: max },
      );
    }
    let session: EnvSession;
    try {
      session = new EnvSession(this.options.makeEnv(), { allowClientTasks: this.options.allowClientTasks });
    } catch (error) {
      return jsonRpcError(
        request.id,
        jsonRpcErrorCodes.serverError,
        `cannot build environment ${this.options.serverName}: ${errorMessage(error)}`,
      );
    }
    const entry: HttpSession = { session };
    this.sessions.set(session.id, entry); // holds the slot while the episode starts
    try {
      const { seed = 0, task } = params.data;
      await session.reset(task === undefined ? { seed } : { seed, task });
    } catch (error) {
      this.sessions.delete(session.id);
      await closeEnv(session.env);
      return jsonRpcError(
        request.id,
        jsonRpcErrorCodes.serverError,
        `cannot start an episode of ${this.options.serverName}: ${errorMessage(error)}`,
      );
    }
    this.touch(session.id, entry);
    return success(request, { session_id: session.id });
  }

  private async close(request: JsonRpcRequest, socket: SocketScope | undefined): Promise<JsonRpcResponse> {
    const sessionId = request.params.session_id;
    if (typeof sessionId !== 'string' || sessionId === '')
      return jsonRpcError(request.id, jsonRpcErrorCodes.invalidParams, "Invalid params - 'session_id' is required");
    if (socket !== undefined && sessionId === socket.session.id) {
      return jsonRpcError(
        request.id,
        jsonRpcErrorCodes.invalidRequest,
        "Cannot close the WebSocket's own session via MCP; close the socket",
      );
    }
    const entry = this.sessions.get(sessionId);
    if (entry === undefined)
      return jsonRpcError(
        request.id,
        jsonRpcErrorCodes.invalidParams,
        `Unknown session_id: ${JSON.stringify(sessionId)}`,
      );
    this.sessions.delete(sessionId);
    await this.release(entry);
    return success(request, { session_id: sessionId, closed: true });
  }

  private touch(sessionId: string, entry: HttpSession): void {
    if (this.options.sessionTimeoutS === 0) return;
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      if (this.sessions.get(sessionId) !== entry) return;
      this.sessions.delete(sessionId);
      void this.release(entry);
    }, this.options.sessionTimeoutS * 1000);
  }

  private async release(entry: HttpSession): Promise<void> {
    clearTimeout(entry.timer);
    await closeEnv(entry.session.env);
  }
}

function success(request: JsonRpcRequest, result: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id: request.id, result };
}

/** Closes an env, ignoring its failure (nothing is left to report it to). */
export async function closeEnv(env: Env): Promise<void> {
  try {
    await env.close?.();
  } catch {
    // the env's own cleanup failed; the session is gone either way
  }
}
