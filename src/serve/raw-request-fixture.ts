/**
 * Requests as a browser (or a hostile page) would send them, for the tests of the request guard:
 * node:http, so every header — Host and Origin included — is exactly what the test writes.
 */
import { request } from 'node:http';
import WebSocket from 'ws';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: any;
}

export interface RawRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One HTTP request to `url` (its host and port) with exactly these headers. */
export function rawRequest(url: string, { method = 'GET', headers = {}, body }: RawRequest = {}): Promise<RawAnswer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = request(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method, headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json: parseJson(text) });
        });
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

/** Opens a WebSocket with these headers: 'open', or the HTTP status that refused the handshake. */
export function openWebSocket(url: string, headers: Record<string, string> = {}): Promise<'open' | number> {
  return new Promise((resolve, reject) => {
    const { origin, ...others } = headers;
    const ws = new WebSocket(url, { headers: others, ...(origin === undefined ? {} : { origin }) });
    ws.on('open', () => {
      ws.close();
      resolve('open');
    });
    ws.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      response.resume();
      ws.terminate();
    });
    ws.on('error', reject);
  });
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
