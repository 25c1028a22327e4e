/**
 * The env server's WebSocket sessions (`/ws` and `/mcp`): one environment instance per
 * connection, messages answered in order, an idle timeout, and `maxSessions` shared with the HTTP
 * MCP sessions. Each path is a Hono `upgradeWebSocket` route; the `ws` socket underneath
 * (`raw`) is what a session holds.
 *
 *   /ws    OpenEnv's messages (socket-messages.ts); refusals are {"type":"error"} messages
 *   /mcp   JSON-RPC 2.0; refusals and the idle timeout are JSON-RPC errors -32000 with `data.code`
 */
import { upgradeWebSocket } from '@hono/node-server';
import type { MiddlewareHandler } from 'hono';
import type { WebSocket } from 'ws';
import type { Env } from '../../core/types.ts';
import type { ServerEnv } from '../hono-server.ts';
import { errorMessage } from '../http.ts';
import { jsonRpcError, jsonRpcErrorCodes } from './mcp.ts';
import { closeEnv, type McpSessions } from './mcp-sessions.ts';
import { EnvSession } from './session.ts';
import { answerMcpMessage, answerWsMessage, sendWsError, type WsErrorCode } from './socket-messages.ts';

/** How one WebSocket path talks: how it tells the client of a refusal or timeout, and how it answers a message. */
export interface SocketProtocol {
  notify(ws: WebSocket, code: WsErrorCode, message: string, extra?: Record<string, unknown>): void;
  answer(ws: WebSocket, session: EnvSession, text: string): Promise<void>;
}

export interface SocketSessionsOptions {
  name: string;
  makeEnv: () => Env;
  maxSessions: number;
  sessionTimeoutS: number;
  mcpSessions: McpSessions;
  /** Pass a client's task unchecked to an env without a `taskSchema` (client-task.ts). */
  allowClientTasks: boolean;
}

export class SocketSessions {
  private readonly sockets = new Set<WebSocket>();

  constructor(private readonly options: SocketSessionsOptions) {}

  get size(): number {
    return this.sockets.size;
  }

  /** GET /ws: OpenEnv's WebSocket protocol. */
  openEnvRoute(): MiddlewareHandler<ServerEnv> {
    const { mcpSessions } = this.options;
    return this.route({
      notify: sendWsError,
      answer: (ws, session, text) => answerWsMessage(ws, session, text, mcpSessions),
    });
  }

  /** GET /mcp (upgrade): MCP's JSON-RPC over a WebSocket. */
  mcpRoute(): MiddlewareHandler<ServerEnv> {
    const { mcpSessions } = this.options;
    return this.route({
      notify: sendMcpError,
      answer: (ws, session, text) => answerMcpMessage(ws, session, text, mcpSessions),
    });
  }

  terminateAll(): void {
    for (const ws of this.sockets) ws.terminate();
  }

  private route(protocol: SocketProtocol): MiddlewareHandler<ServerEnv> {
    return upgradeWebSocket(() => {
      let opened: { ws: WebSocket; session: EnvSession; touch(): void; queue: Promise<void> } | undefined;
      return {
        onOpen: (_event, context) => {
          opened = this.open(context.raw as WebSocket, protocol);
        },
        onMessage: (event, context) => {
          if (opened === undefined) return;
          const current = opened;
          current.touch();
          const text =
            typeof event.data === 'string' ? event.data : Buffer.from(event.data as ArrayBuffer).toString('utf8');
          // the protocol answers its own failures; should even that fail, only this socket goes.
          current.queue = current.queue
            .then(() => protocol.answer(current.ws, current.session, text))
            .catch(() => (context.raw as WebSocket).terminate());
        },
      };
    });
  }

  /** A new connection: refused at capacity or when the env cannot be built; else its session, idle timer and cleanup. */
  private open(
    ws: WebSocket,
    protocol: SocketProtocol,
  ): { ws: WebSocket; session: EnvSession; touch(): void; queue: Promise<void> } | undefined {
    const { name, makeEnv, maxSessions, sessionTimeoutS, mcpSessions, allowClientTasks } = this.options;
    const active = this.sockets.size + mcpSessions.size;
    if (active >= maxSessions) {
      protocol.notify(
        ws,
        'CAPACITY_REACHED',
        `server at capacity: ${active} of ${maxSessions} sessions active; retry later or raise --max-sessions`,
        { active_sessions: active, max_sessions: maxSessions },
      );
      ws.close(1013, 'capacity reached');
      return undefined;
    }
    let session: EnvSession;
    try {
      session = new EnvSession(makeEnv(), { allowClientTasks });
    } catch (error) {
      protocol.notify(ws, 'FACTORY_ERROR', `cannot build environment ${name}: ${errorMessage(error)}`);
      ws.close(1011, 'factory error');
      return undefined;
    }
    this.sockets.add(ws);
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
    // the socket is gone: closing the env kills its work in flight (a step's sandbox run) at once
    ws.on('close', () => {
      clearTimeout(timer);
      this.sockets.delete(ws);
      void closeEnv(session.env);
    });
    // ws has already started closing (a frame over maxPayload: close 1009; a socket error: destroyed);
    // terminating here would cut the close frame off and the client would see 1006.
    ws.on('error', () => {});
    return { ws, session, touch, queue: Promise.resolve() };
  }
}

/** On the WebSocket /mcp, a refusal or the idle timeout is a JSON-RPC error (id null) with the /ws code in `data.code`. */
function sendMcpError(ws: WebSocket, code: WsErrorCode, message: string, extra: Record<string, unknown> = {}): void {
  if (ws.readyState !== ws.OPEN) return;
  ws.send(JSON.stringify(jsonRpcError(null, jsonRpcErrorCodes.serverError, message, { code, ...extra })));
}
