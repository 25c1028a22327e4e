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
 *
 * Every app refuses, before any route (WebSocket upgrades included), a request with a foreign Host
 * or Origin (request-access.ts: 403 in the server's error shape; the upgrade is rejected before
 * the handshake); origins in `allowedOrigins` are answered with CORS headers.
 */
import type { Server } from 'node:http';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import type { WebSocketServer } from 'ws';
import { baseUrl, errorMessage, listen, pathOf, readJsonBody, type JsonBody } from './http.ts';
import { parseRequestAccess, type RequestAccess, type RequestAccessOptions, requestRefusal } from './request-access.ts';

/** The Hono environment of every agentrl server: the node request and response, and who may call (set by listenApp). */
export type ServerEnv = { Bindings: HttpBindings & { access?: RequestAccess } };
export type ServerContext = Context<ServerEnv>;

/**
 * A new app for one of the servers. Hono hands only thrown `Error`s to `onError`; a handler (or an
 * env it runs) that throws anything else — a string, an object — is turned into a `ThrownValue`
 * here, so every failure reaches the server's error mapping (../error-bodies.ts).
 */
export function serverApp(): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();
  app.use(refuseForeignRequests(), allowListedCors());
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

/** What an app served without listenApp's access is checked against: a loopback server's, no other origin. */
const loopbackAccess = parseRequestAccess({ host: '127.0.0.1' });

/** Refuses a request with a foreign Host or Origin (request-access.ts) before any route; the app's onError shapes the 403. */
function refuseForeignRequests(): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const { incoming, access = loopbackAccess } = c.env;
    if (incoming !== undefined) {
      const refusal = requestRefusal(incoming, access);
      if (refusal !== undefined) throw refusal;
    }
    await next();
  };
}

/** CORS headers (and preflight answers) for the origins of `allowedOrigins` only; none for anyone else. */
function allowListedCors(): MiddlewareHandler<ServerEnv> {
  const allowed = cors({
    origin: (origin, c: ServerContext) => (isAllowListed(c, origin) ? origin : null),
    allowMethods: ['GET', 'POST'],
  });
  return (c, next) => (isAllowListed(c, c.req.header('origin')) ? allowed(c, next) : next());
}

function isAllowListed(c: ServerContext, origin: string | undefined): boolean {
  return origin !== undefined && (c.env.access?.allowedOrigins.includes(origin) ?? false);
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
  {
    host,
    port,
    websocket,
    allowedOrigins,
  }: { host: string; port: number; websocket?: WebSocketServer } & Pick<RequestAccessOptions, 'allowedOrigins'>,
): Promise<ListeningApp> {
  const access = parseRequestAccess({ host, allowedOrigins });
  const server = createAdaptorServer({
    // The adapter reads back, from this same env object, what an upgrade route writes into it: the
    // access is added in place, not by copying.
    fetch: (request, env) => app.fetch(request, Object.assign(env as HttpBindings, { access })),
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

/** Reads the JSON body (`maxBytes` at most, default 8 MiB; BodyTooLargeError past it); an empty body is `emptyValue`. */
export function readJson(c: ServerContext, emptyValue?: unknown, maxBytes?: number): Promise<JsonBody> {
  return readJsonBody(c.env.incoming, emptyValue, maxBytes);
}
