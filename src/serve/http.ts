/**
 * Small HTTP helpers shared by the env server and the policy server (node:http, no framework).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentRlError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { RefusedRequestError } from './request-access.ts';

/** Request bodies larger than this are refused (413). */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

export class BodyTooLargeError extends AgentRlError {
  /** `declared`: the Content-Length that gave it away before the body was read. */
  constructor(limit: number, declared?: number) {
    const size = declared === undefined ? '' : ` (Content-Length: ${declared})`;
    super('BODY_TOO_LARGE', `request body over ${limit} bytes${size}`, { limit, declared: declared ?? null });
  }
}

export type JsonBody = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * Reads the whole body and parses it as JSON; an empty body is `emptyValue`. A body of another
 * media type is refused before it is read (RefusedRequestError 415, see `requireJsonContentType`).
 */
export async function readJsonBody(
  request: IncomingMessage,
  emptyValue: unknown = undefined,
  maxBytes = MAX_BODY_BYTES,
): Promise<JsonBody> {
  requireJsonContentType(request);
  refuseDeclaredOversize(request, maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new BodyTooLargeError(maxBytes);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '')
    return emptyValue === undefined
      ? { ok: false, message: 'empty body; expected JSON' }
      : { ok: true, value: emptyValue };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: `invalid JSON: ${(error as Error).message}` };
  }
}

/**
 * JSON bodies come as `application/json` or `application/…+json` (parameters such as charset
 * allowed). Any other Content-Type, or a body without one, is refused 415: text/plain and the form
 * encodings are what a web page elsewhere can post without the browser asking first. A request with
 * no body and no Content-Type passes (an empty POST /reset).
 */
export function requireJsonContentType(request: Pick<IncomingMessage, 'headers'>): void {
  const contentType = request.headers['content-type'];
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== undefined && /^application\/(?:[a-z0-9.!#$%&'*^_`|~-]+\+)?json$/.test(mediaType)) return;
  const { 'content-length': length, 'transfer-encoding': encoding } = request.headers;
  if (contentType === undefined && encoding === undefined && (length === undefined || Number(length) === 0)) return;
  throw new RefusedRequestError(
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    `request bodies are JSON: send Content-Type: application/json (got ${contentType === undefined ? 'none' : JSON.stringify(contentType)})`,
    { contentType: contentType ?? null },
  );
}

/** 413 before reading a byte when the request's Content-Length already says the body is over `maxBytes`. */
export function refuseDeclaredOversize(request: Pick<IncomingMessage, 'headers'>, maxBytes: number): void {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw new BodyTooLargeError(maxBytes, declared);
}

/** The message of anything thrown (an Error, a string, an object without `toString`); never throws. */
export function errorMessage(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return `a thrown ${Object.prototype.toString.call(error)} that cannot be printed`;
  }
}

export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

/** Starts listening; resolves with the bound port (0 = any free port). */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** `http://host:port`, with IPv6 hosts bracketed. */
export function baseUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The path of a request without its query string. */
export function pathOf(request: IncomingMessage): string {
  return at((request.url ?? '/').split('?'), 0, 'request URL parts');
}
