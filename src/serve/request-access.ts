/**
 * Which requests agentrl's local servers answer (serve-env, serve-policy, the gateway, the
 * dashboard): the defence against a web page the user visits driving a server on their machine.
 *
 *   Host     a server bound to a loopback address (localhost, 127.0.0.0/8, ::1) answers only
 *            requests whose Host names a loopback address or the configured host; a DNS-rebinding
 *            page (evil.example resolving to 127.0.0.1) sends `Host: evil.example` → 403
 *   Origin   a request that carries `Origin` must come from the server's own origin: the origin of
 *            its Host, or a loopback origin on the server's port (http://localhost:P and
 *            http://127.0.0.1:P are one server), or one of `allowedOrigins` → else 403. Browsers add
 *            Origin to every POST, every WebSocket handshake and every cross-origin fetch, so no
 *            page elsewhere can post to a server or open its sockets; `Origin: null` (sandboxed
 *            frames, file: pages) is refused too.
 *   no Origin  server-to-server clients (curl, Python requests/httpx/websockets, the openai SDK,
 *            Node's fetch) send none and are answered as before.
 *
 * Request bodies are JSON only as `application/json` (or `…+json`, parameters allowed): the media
 * types a cross-site form can send without asking (text/plain, form encodings) are refused 415
 * (http.ts). Not guaranteed: a server bound to a non-loopback address (0.0.0.0) does not check Host
 * (it cannot know every name it is reached by), so a rebinding page that resolves to its LAN address
 * passes; GET requests without Origin (a link, an image tag) are answered, and no GET route changes
 * state. There is no authentication: any process on the machine may call a loopback server.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import { AgentRlError, InvalidArgumentError } from '../core/errors.ts';

const originSchema = z.string().refine(
  (text) => {
    try {
      return new URL(text).origin === text;
    } catch {
      return false;
    }
  },
  { message: 'an origin is scheme://host[:port] with no path or trailing slash, e.g. http://localhost:5173' },
);

export const requestAccessSchema = z.object({
  /** The address the server binds to (its Host header is checked when it is a loopback address). */
  host: z.string().min(1),
  /** Origins of web pages allowed to call the server besides its own (scheme://host[:port]); they also get CORS headers. Default none. */
  allowedOrigins: z.array(originSchema).default([]),
});
export type RequestAccessOptions = z.input<typeof requestAccessSchema>;
export type RequestAccess = z.output<typeof requestAccessSchema>;

/** The access options checked (InvalidArgumentError naming the bad origin). */
export function parseRequestAccess(options: RequestAccessOptions): RequestAccess {
  const parsed = requestAccessSchema.safeParse(options);
  if (!parsed.success)
    throw new InvalidArgumentError(`server access options: ${z.prettifyError(parsed.error)}`, {
      allowedOrigins: options.allowedOrigins,
    });
  return parsed.data;
}

export type RefusalCode = 'CROSS_SITE_REQUEST' | 'UNTRUSTED_HOST' | 'UNSUPPORTED_MEDIA_TYPE';

/** A request a local server refuses before any work: its HTTP status and why. */
export class RefusedRequestError extends AgentRlError {
  constructor(
    readonly status: 403 | 415,
    code: RefusalCode,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(code, message, { status, ...details });
  }
}

/** What the check reads of a request (node's IncomingMessage has it). */
export interface RequestFacts {
  headers: IncomingHttpHeaders;
  socket: { localPort?: number | undefined };
}

/** The refusal of a request the server must not answer (bad Host, foreign Origin); undefined when it may. */
export function requestRefusal(request: RequestFacts, access: RequestAccess): RefusedRequestError | undefined {
  const hostHeader = request.headers.host;
  const hostName = hostHeader === undefined ? undefined : hostnameOf(hostHeader);
  const configuredHost = hostnameOf(access.host);
  if (isLoopbackName(configuredHost) && hostHeader !== undefined) {
    if (hostName === undefined || !(isLoopbackName(hostName) || hostName === configuredHost))
      return new RefusedRequestError(
        403,
        'UNTRUSTED_HOST',
        `Host ${JSON.stringify(hostHeader)} is not this server: a server bound to ${access.host} answers only a loopback Host (localhost, 127.0.0.1, [::1])`,
        { host: hostHeader },
      );
  }
  const origin = request.headers.origin;
  if (origin === undefined || isOwnOrigin(origin, hostHeader, request.socket.localPort, access)) return undefined;
  return new RefusedRequestError(
    403,
    'CROSS_SITE_REQUEST',
    `requests from the web page at ${JSON.stringify(origin)} are refused: only this server's own origin${access.allowedOrigins.length > 0 ? ` and ${access.allowedOrigins.join(', ')}` : ''} may call it (a server-to-server client sends no Origin; allow a page with allowedOrigins)`,
    { origin },
  );
}

function isOwnOrigin(
  origin: string,
  hostHeader: string | undefined,
  localPort: number | undefined,
  access: RequestAccess,
): boolean {
  if (access.allowedOrigins.includes(origin)) return true;
  const url = parseUrl(origin);
  if (url === undefined || url.origin !== origin || url.protocol !== 'http:') return false;
  if (hostHeader !== undefined && url.host === parseUrl(`http://${hostHeader}`)?.host) return true;
  return isLoopbackName(url.hostname) && Number(url.port || '80') === localPort;
}

/** The host name of a Host header or a configured host (IPv6 bracketed, lower case); undefined when malformed. */
function hostnameOf(host: string): string | undefined {
  if (/[@/?#\\\s]/.test(host)) return undefined; // userinfo, a path or spaces: not a plain host[:port]
  const bare = host.includes(':') && !host.startsWith('[') && host.indexOf(':') !== host.lastIndexOf(':');
  return parseUrl(`http://${bare ? `[${host}]` : host}`)?.hostname;
}

/** localhost, 127.0.0.0/8 and ::1 (names as the URL parser writes them). */
function isLoopbackName(hostname: string | undefined): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname ?? '');
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
