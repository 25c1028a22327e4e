/**
 * The request guard (request-access.ts) on every local server, over real HTTP: one contract run
 * against serve-env, serve-policy, the gateway and the dashboard — a page elsewhere (a foreign
 * Origin, `Origin: null`) or a DNS-rebinding page (`Host: evil.example`) is refused 403 in the
 * server's own error shape, while server-to-server clients (no Origin) and the server's own
 * loopback origins are answered. Then what only serve-env has: its WebSocket upgrade.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDashboard } from '../dashboard/server.ts';
import { makeEnv } from '../envs/index.ts';
import { RunStore } from '../store/run-store.ts';
import { sampler } from './gateway/scripted-sampler-fixture.ts';
import { startGateway } from './gateway/gateway.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { startPolicyServer } from './openai/policy-server.ts';
import { startEnvServer } from './openenv/env-server.ts';
import { openWebSocket, rawRequest, type RawAnswer, type RawRequest } from './raw-request-fixture.ts';
import { parseRequestAccess, requestRefusal } from './request-access.ts';

const evil = 'http://evil.example';
const json = { 'content-type': 'application/json' };

/** A started server, the request with an effect a hostile page would send it, and its error shape. */
interface GuardedServer {
  url: string;
  port: number;
  /** A request that does work (resets an env, samples, records a call); answered 200 when allowed. */
  work(): RawRequest & { path: string };
  /** The message of the server's error shape; undefined for any other body. */
  errorMessage(json: any): string | undefined;
  close(): Promise<void>;
}

const openAiError = (body: any) =>
  ['type', 'param', 'code'].every((key) => key in (body?.error ?? {})) ? body.error.message : undefined;

const servers: Record<string, () => Promise<GuardedServer>> = {
  'serve-env': async () => {
    const server = await startEnvServer({ env: () => makeEnv('frozen-lake'), port: 0 });
    return {
      ...server,
      work: () => ({ path: '/reset', method: 'POST', headers: json, body: '{"seed": 1}' }),
      errorMessage: (body) => (typeof body?.code === 'string' ? body.detail : undefined),
    };
  },
  'serve-policy': async () => {
    const policy = new ScriptedPolicy({ reply: [''], logprob: -1, contextWindow: 256 }); // replies with the stop id alone
    const server = await startPolicyServer({ policy, modelName: 'agentrl', port: 0 });
    const body = JSON.stringify({ model: 'agentrl', prompt: 'x', max_tokens: 1 });
    return {
      ...server,
      work: () => ({ path: '/v1/completions', method: 'POST', headers: json, body }),
      errorMessage: openAiError,
    };
  },
  gateway: async () => {
    const gateway = await startGateway({ sampler: sampler(() => 'ok') });
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    let sessions = 0; // a new session each call: a session belongs to its first caller
    return {
      ...gateway,
      port: Number(new URL(gateway.url).port),
      work: () => ({
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { ...json, 'x-session-id': `guarded-${++sessions}` },
        body,
      }),
      errorMessage: openAiError,
    };
  },
  dashboard: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentrl-request-access-'));
    const store = RunStore.open(join(dir, 'agentrl.db'));
    store.createRun({ command: 'train', name: 'guarded', seed: 0, gitCommit: null, config: {} });
    const dashboard = await startDashboard({ store: store.path });
    return {
      url: dashboard.url.replace(/\/$/, ''),
      port: Number(new URL(dashboard.url).port),
      work: () => ({ path: '/api/runs' }), // read-only: what a page elsewhere would want to read
      errorMessage: (body) => body?.error,
      close: async () => {
        await dashboard.close();
        store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
};

function send(server: GuardedServer, headers: Record<string, string>): Promise<RawAnswer> {
  const { path, ...request } = server.work();
  return rawRequest(`${server.url}${path}`, { ...request, headers: { ...request.headers, ...headers } });
}

function assertRefused(server: GuardedServer, answer: RawAnswer, pattern: RegExp): void {
  assert.equal(answer.status, 403, answer.text);
  const message = server.errorMessage(answer.json);
  assert.equal(typeof message, 'string', `the server's error shape: ${answer.text}`);
  assert.match(message ?? '', pattern);
}

for (const [name, start] of Object.entries(servers)) {
  describe(`${name} refuses cross-site requests`, () => {
    let server: GuardedServer;
    before(async () => {
      server = await start();
    });
    after(() => server.close());

    test('a page on another origin (or Origin: null) is refused 403; its request does no work', async () => {
      assertRefused(server, await send(server, { origin: evil }), /evil\.example.*refused/);
      assertRefused(server, await send(server, { origin: 'null' }), /"null" are refused/);
      assertRefused(server, await send(server, { origin: `http://127.0.0.1:${server.port + 1}` }), /refused/);
      assertRefused(server, await send(server, { origin: `https://127.0.0.1:${server.port}` }), /refused/);
    });

    test('a DNS-rebinding page (Host: evil.example, even with its own origin) is refused 403', async () => {
      const rebound = `evil.example:${server.port}`;
      assertRefused(server, await send(server, { host: rebound }), /Host "evil\.example:\d+" is not this server/);
      assertRefused(server, await send(server, { host: rebound, origin: `http://${rebound}` }), /Host/);
    });

    test('server-to-server clients (no Origin) and the own loopback origins are answered', async () => {
      assert.equal((await send(server, {})).status, 200);
      for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
        const own = await send(server, { host: `${host}:${server.port}`, origin: `http://${host}:${server.port}` });
        assert.equal(own.status, 200, `${host}: ${own.text}`);
      }
      assert.equal((await send(server, { origin: `http://localhost:${server.port}` })).status, 200);
    });
  });
}

describe('serve-env WebSocket upgrades', () => {
  let url: string;
  let port: number;
  let close: () => Promise<void>;
  before(async () => {
    const server = await startEnvServer({
      env: () => makeEnv('frozen-lake'),
      port: 0,
      allowedOrigins: ['http://localhost:5173'],
    });
    ({ url, port, close } = server);
  });
  after(() => close());

  test('a foreign Origin or Host is refused 403 before the handshake, on /ws and /mcp', async () => {
    for (const path of ['/ws', '/mcp']) {
      const ws = `${url.replace('http', 'ws')}${path}`;
      assert.equal(await openWebSocket(ws, { origin: evil }), 403, path);
      assert.equal(await openWebSocket(ws, { host: `evil.example:${port}` }), 403, path);
      assert.equal(await openWebSocket(ws, { origin: 'null' }), 403, path);
      assert.equal(await openWebSocket(ws), 'open', `${path}: no Origin (Python, ws)`);
      assert.equal(await openWebSocket(ws, { origin: `http://localhost:${port}` }), 'open', path);
      assert.equal(await openWebSocket(ws, { origin: 'http://localhost:5173' }), 'open', `${path}: allowed`);
    }
  });

  test('an allowed origin gets CORS headers (and its preflight an answer); others get none', async () => {
    const preflight = await rawRequest(`${url}/reset`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], 'http://localhost:5173');
    const allowed = await rawRequest(`${url}/reset`, {
      method: 'POST',
      headers: { ...json, origin: 'http://localhost:5173' },
      body: '{}',
    });
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers['access-control-allow-origin'], 'http://localhost:5173');
    const own = await rawRequest(`${url}/health`, { headers: { origin: `http://127.0.0.1:${port}` } });
    assert.equal(own.headers['access-control-allow-origin'], undefined);
  });
});

test('requestRefusal: Host is checked on a loopback bind only; origins must match scheme, host and port', () => {
  const refusal = (host: string, headers: Record<string, string>, allowedOrigins: string[] = []) =>
    requestRefusal({ headers, socket: { localPort: 8000 } }, parseRequestAccess({ host, allowedOrigins }))?.code;
  assert.equal(refusal('127.0.0.1', { host: 'evil.example:8000' }), 'UNTRUSTED_HOST');
  assert.equal(refusal('127.0.0.1', { host: 'evil.example@127.0.0.1:8000' }), 'UNTRUSTED_HOST');
  assert.equal(refusal('::1', { host: '[::1]:8000' }), undefined);
  assert.equal(refusal('localhost', { host: '127.0.0.2:8000' }), undefined);
  assert.equal(refusal('0.0.0.0', { host: 'gpu-box:8000', origin: 'http://gpu-box:8000' }), undefined);
  assert.equal(refusal('0.0.0.0', { host: 'gpu-box:8000', origin: 'http://evil.example' }), 'CROSS_SITE_REQUEST');
  assert.equal(refusal('127.0.0.1', { host: '127.0.0.1:8000', origin: 'http://localhost:8000' }), undefined);
  assert.equal(
    refusal('127.0.0.1', { host: '127.0.0.1:8000', origin: 'http://localhost:8000/' }),
    'CROSS_SITE_REQUEST',
  );
  assert.equal(refusal('127.0.0.1', { origin: 'http://app.example' }, ['http://app.example']), undefined);
  assert.throws(() => parseRequestAccess({ host: '127.0.0.1', allowedOrigins: ['http://app.example/'] }), {
    name: 'InvalidArgumentError',
    message: /scheme:\/\/host\[:port\]/,
  });
});
