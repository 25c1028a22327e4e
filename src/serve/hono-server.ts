/**
 * The one way agentrl's servers listen: a Hono app on @hono/node-server's adapter (node:http
 * underneath), optionally with a `ws` WebSocketServer for the app's `upgradeWebSocket` routes.
 *
 *   const app = new Hono<ServerEnv>().get('/health', () => jsonResponse(200, { status: 'ok' }));
 *   const server = await listenApp(app, { host: '127.0.0.1', port: 0 });
 *
 * Handlers read the node request and response through `c.env` (`incoming`: bodies are read with
 * the size limit of http.ts; `outgoing`: 'finish' tells that a response fully left). The adapter
 * is told not to replace the process's global Request/Response (`overrideGlobalObjects: false`):
 * a library server must not change globals other code in the process sees.
 */
import type { Server } from 'node:http';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import type { WebSocketServer } from 'ws';
import { baseUrl, errorMessage, listen, pathOf, readJsonBody, type JsonBody } from './http.ts';

/** The Hono environment of every agentrl server: the node request and response. */
export type ServerEnv = { Bindings: HttpBindings };
export type ServerContext = Context<ServerEnv>;

/**
 * A new app for one of the servers. Hono hands only thrown `Error`s to `onError`; a handler (or an
 * env it runs) that throws anything else — a string, an object — is turned into a `ThrownValue`
 * here, so every failure reaches the server's error mapping (../error-bodies.ts).
 */
export function serverApp(): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();
  app.use(async (_c, next) => {
    try {
      await next();
    } catch (error) {
      throw error instanceof Error ? error : new ThrownValue(error);
    }
  });
  return app;
}

/** Something thrown that is not an Error; its message is the value's text. */
export class ThrownValue extends Error {
  constructor(readonly value: unknown) {
    super(errorMessage(value));
  }
}

export interface ListeningApp {
  server: Server;
  url: string;
  port: number;
  /** Stops listening and cuts open connections (keep-alive, streams). */
  close(): Promise<void>;
}

export async function listenApp(
  app: Hono<ServerEnv>,
  { host, port, websocket }: { host: string; port: number; websocket?: WebSocketServer },
): Promise<ListeningApp> {
  const server = createAdaptorServer({
    fetch: app.fetch,
    overrideGlobalObjects: false,
    ...(websocket === undefined ? {} : { websocket: { server: websocket } }),
  }) as Server;
  const boundPort = await listen(server, port, host);
  return {
    server,
    url: baseUrl(host, boundPort),
    port: boundPort,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** A JSON response (`content-type: application/json`, as every agentrl server answers). */
export function jsonResponse(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
}

/** The request path without its query string, as the client wrote it (not percent-decoded). */
export function requestPath(c: ServerContext): string {
  return c.env.incoming === undefined ? new URL(c.req.url).pathname : pathOf(c.env.incoming);
}

/** Reads the JSON body (8 MiB at most; BodyTooLargeError past it); an empty body is `emptyValue`. */
export function readJson(c: ServerContext, emptyValue?: unknown): Promise<JsonBody> {
  return readJsonBody(c.env.incoming, emptyValue);
}
