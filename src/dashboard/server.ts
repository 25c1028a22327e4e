/**
 * The dashboard's HTTP server (node:http, loopback only): the page from web/dashboard/, the uPlot
 * charting library from node_modules (nothing is fetched from the network), and the read-only
 * JSON API of api.ts. The store is opened read-only, so it can serve a run while `agentrl train`
 * is writing it (WAL: every response sees whole committed steps).
 *
 *   /                      the dashboard; its state (runs, metrics, axes, trajectory) is in the query string
 *   /runs/:run             the dashboard with that run selected (a link to share)
 *   /api/…                 JSON (api.ts); unknown API paths are JSON 404s
 *   anything else          an HTML 404 page
 *
 * Like every agentrl server it refuses (403) a request with a foreign Origin, or a Host that is not
 * a loopback name (DNS rebinding), before anything else (../serve/request-access.ts): no page on
 * another site can read the runs through the user's browser. A malformed request (a bad percent
 * escape, a query value out of range) is a 400, never a 500.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentRlError, InvalidArgumentError } from '../core/errors.ts';
import { parseRequestAccess, requestRefusal } from '../serve/request-access.ts';
import { RunNotFoundError, RunStore } from '../store/run-store.ts';
import { answerApi, ApiNotFoundError } from './api.ts';
import { decodePathSegment } from './api-query.ts';

const webRoot = fileURLToPath(new URL('../../web/dashboard/', import.meta.url));
const uplotRoot = dirname(createRequire(import.meta.url).resolve('uplot'));
const vendorFiles: Record<string, string> = {
  '/vendor/uPlot.esm.js': 'uPlot.esm.js',
  '/vendor/uPlot.min.css': 'uPlot.min.css',
};
/** Page modules and styles: one plain name, no folders (so no path can leave web/dashboard/). */
const pageFile = /^\/([a-z][a-z0-9-]*\.(?:js|css))$/;
const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** The dashboard's port is taken (another dashboard, or another program). */
export class PortInUseError extends AgentRlError {
  constructor(port: number) {
    super(
      'PORT_IN_USE',
      `port ${port} on 127.0.0.1 is in use (another agentrl dashboard, or another program); pass --port <another port>, or --port 0 for any free one`,
      { port },
    );
  }
}

export interface DashboardOptions {
  store: string;
  /** 0 = any free port. */
  port?: number;
}

export interface Dashboard {
  url: string;
  close(): Promise<void>;
}

export async function startDashboard({ store: path, port = 0 }: DashboardOptions): Promise<Dashboard> {
  const store = RunStore.open(path, { readonly: true });
  const server = createServer((request, response) => {
    handle(store, request, response).catch((error: unknown) =>
      sendJson(response, 500, { error: (error as Error).message }),
    );
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
  } catch (error) {
    store.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUseError(port);
    throw error;
  }
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      store.close();
    },
  };
}

/** Who may call the dashboard: its own origin on the loopback address it binds to. */
const access = parseRequestAccess({ host: '127.0.0.1' });

async function handle(store: RunStore, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const refusal = requestRefusal(request, access);
  if (refusal !== undefined) return sendJson(response, refusal.status, { error: refusal.message, code: refusal.code });
  const url = requestUrl(request);
  if (url === undefined)
    return sendJson(response, 400, { error: `malformed request target ${JSON.stringify(request.url)}` });
  const { pathname } = url;
  if (request.method !== 'GET') return sendJson(response, 405, { error: 'read-only: GET only' });
  if (pathname.startsWith('/api/')) return api(store, pathname, url.searchParams, response);
  if (pathname === '/' || /^\/runs\/[^/]+\/?$/.test(pathname)) return sendFile(response, join(webRoot, 'index.html'));
  const vendor = vendorFiles[pathname];
  if (vendor !== undefined) return sendFile(response, join(uplotRoot, vendor));
  const page = pageFile.exec(pathname)?.[1];
  if (
    page !== undefined &&
    (await sendFile(response, join(webRoot, page)).then(
      () => true,
      () => false,
    ))
  )
    return;
  sendNotFoundPage(response, pathname);
}

function api(store: RunStore, pathname: string, query: URLSearchParams, response: ServerResponse): void {
  try {
    const parts = pathname.split('/').filter(Boolean).map(decodePathSegment);
    if (parts[1] !== 'runs') {
      sendJson(response, 404, { error: `no such API path: ${pathname} (the API is under /api/runs)` });
      return;
    }
    sendJson(response, 200, answerApi(store, parts.slice(2), query));
  } catch (error) {
    if (error instanceof RunNotFoundError || error instanceof ApiNotFoundError)
      sendJson(response, 404, { error: error.message });
    else if (error instanceof InvalidArgumentError) sendJson(response, 400, { error: error.message });
    else throw error;
  }
}

/** The request's URL; undefined for a target the URL parser refuses (e.g. the absolute form `http://[`). */
function requestUrl(request: IncomingMessage): URL | undefined {
  try {
    return new URL(request.url ?? '/', 'http://127.0.0.1');
  } catch {
    return undefined;
  }
}

async function sendFile(response: ServerResponse, file: string): Promise<void> {
  const body = await readFile(file);
  response.writeHead(200, {
    'content-type': contentTypes[extname(file)] ?? 'application/octet-stream',
    'cache-control': 'no-cache',
  });
  response.end(body);
}

function sendNotFoundPage(response: ServerResponse, pathname: string): void {
  const path = pathname.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  response.writeHead(404, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  response.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not found · agentrl dashboard</title><link rel="stylesheet" href="/style.css"></head>
<body class="not-found"><main><h1>No page here</h1>
<p>The dashboard has no page at <code>${path}</code>.</p>
<p><a href="/">Open the dashboard</a>, or link a run as <code>/runs/&lt;run name or id&gt;</code>.</p></main></body></html>`);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}
