/**
 * The dashboard's HTTP server (node:http, loopback only): the static page from web/dashboard/ and
 * a small read-only JSON API over the run store. The store is opened read-only, so it can serve a
 * run while `agentrl train` is writing it (WAL: every response sees whole committed steps).
 *
 *   GET /api/runs                                  runs, newest first, with their last step
 *   GET /api/runs/:run                             run record, evaluations, checkpoints
 *   GET /api/runs/:run/metrics                     [{ step, time, values }]
 *   GET /api/runs/:run/trajectories                [{ step, index, groupId, totalReward, success, tokens }]
 *   GET /api/runs/:run/trajectories/:step/:index   one trajectory, token level
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentRlError } from '../core/errors.ts';
import { RunStore } from '../store/run-store.ts';

const webRoot = fileURLToPath(new URL('../../web/dashboard/', import.meta.url));
const staticFiles: Record<string, string> = { '/': 'index.html', '/app.js': 'app.js', '/charts.js': 'charts.js', '/style.css': 'style.css' };
const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** The dashboard's port is taken (another dashboard, or another program). */
export class PortInUseError extends AgentRlError {
  constructor(port: number) {
    super('PORT_IN_USE', `port ${port} on 127.0.0.1 is in use (another agentrl dashboard, or another program); pass --port <another port>, or --port 0 for any free one`, { port });
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
    handle(store, request, response).catch((error: unknown) => send(response, 500, { error: (error as Error).message }));
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

async function handle(store: RunStore, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { pathname } = new URL(request.url ?? '/', 'http://127.0.0.1');
  if (request.method !== 'GET') return send(response, 405, { error: 'read-only: GET only' });
  const file = staticFiles[pathname];
  if (file !== undefined) {
    const body = await readFile(webRoot + file);
    response.writeHead(200, { 'content-type': contentTypes[extname(file)]!, 'cache-control': 'no-cache' });
    response.end(body);
    return;
  }
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'api' || parts[1] !== 'runs') return send(response, 404, { error: `no such page: ${pathname}` });
  try {
    send(response, 200, api(store, parts.slice(2)));
  } catch (error) {
    if (error instanceof AgentRlError) send(response, 404, { error: error.message });
    else throw error;
  }
}

function api(store: RunStore, parts: string[]): unknown {
  return store.transaction(() => {
    if (parts.length === 0) {
      return store.runs().map((run) => {
        const metrics = store.metrics(run.id);
        return { ...run, steps: metrics.length, last: metrics.at(-1)?.values ?? null };
      });
    }
    const run = store.run(parts[0]!);
    const [, section, step, index] = parts;
    if (section === undefined) return { run, evaluations: store.evaluations(run.id), checkpoints: store.checkpoints(run.id) };
    if (section === 'metrics' && step === undefined) return store.metrics(run.id);
    if (section === 'trajectories' && step === undefined) return store.trajectoryList(run.id);
    if (section === 'trajectories' && index !== undefined && parts.length === 4) {
      const trajectory = store.trajectory(run.id, Number(step), Number(index));
      if (trajectory === undefined) throw new AgentRlError('NOT_FOUND', `run ${run.name} has no trajectory ${step}/${index}`);
      return trajectory;
    }
    throw new AgentRlError('NOT_FOUND', `no such API path: /api/runs/${parts.join('/')}`);
  });
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}
