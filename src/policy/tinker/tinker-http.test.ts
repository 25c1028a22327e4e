import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { TinkerClient } from './tinker-client.ts';
import { TinkerError } from './tinker-error.ts';
import { requestJson } from './tinker-http.ts';
import { at, entry } from '../../core/indexing.ts';

/** A loopback server answering each request with the next handler (retry and timeout behaviour only). */
async function withServer(
  handlers: ((request: IncomingMessage, response: ServerResponse) => void)[],
  run: (baseUrl: string, hits: () => number) => Promise<void>,
): Promise<void> {
  let hits = 0;
  const server: Server = createServer((request, response) => {
    const handler = at(handlers, Math.min(hits, handlers.length - 1));
    hits += 1;
    request.resume();
    request.on('end', () => handler(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => hits);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (_: IncomingMessage, response: ServerResponse) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };

test('503 then 429 (Retry-After 0) are retried with the backoff schedule; the third answer is returned', async () => {
  const waits: number[] = [];
  await withServer(
    [
      json(503, { detail: 'busy' }),
      json(429, { detail: 'slow down' }, { 'retry-after': '0' }),
      json(200, { ok: true }),
    ],
    async (baseUrl, hits) => {
      const answer = await requestJson({
        baseUrl,
        method: 'POST',
        path: '/api/v1/optim_step',
        body: {},
        retry: { sleep: async (ms) => void waits.push(ms) },
      });
      assert.deepEqual(answer, { ok: true });
      assert.equal(hits(), 3);
    },
  );
  assert.deepEqual(waits, [250, 0]);
});

test('a 404 fails at once with a TinkerError naming endpoint, status and body', async () => {
  await withServer([json(404, { detail: 'Model not found' })], async (baseUrl, hits) => {
    const error = await requestJson({ baseUrl, method: 'POST', path: '/api/v1/forward', body: {} }).catch(
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof TinkerError);
    assert.equal(error.endpoint, 'POST /api/v1/forward');
    assert.equal(error.status, 404);
    assert.equal(error.body, '{"detail":"Model not found"}');
    assert.equal(hits(), 1);
  });
});

test('no answer within timeoutMs is retried, then fails naming the timeout', async () => {
  const hang = (): void => undefined;
  await withServer([hang], async (baseUrl, hits) => {
    const error = await requestJson({
      baseUrl,
      method: 'GET',
      path: '/api/v1/healthz',
      retry: { timeoutMs: 100, maxRetries: 1, sleep: async () => undefined },
    }).catch((caught: unknown) => caught);
    assert.ok(error instanceof TinkerError);
    assert.match(error.message, /no answer within 100 ms after 2 attempts/);
    assert.equal(error.status, undefined);
    assert.equal(hits(), 2);
  });
});

test("futures: 408 and try_again are polled again; a failed future's error becomes a TinkerError with its request id", async () => {
  await withServer(
    [
      json(200, { request_id: '7' }),
      json(408, { detail: 'Timeout waiting for result' }),
      json(200, { type: 'try_again', request_id: '7', queue_state: 'active' }),
      json(200, { metrics: {} }),
    ],
    async (baseUrl) => {
      const local = new TinkerClient({ baseUrl, heartbeatMs: 0, retry: { sleep: async () => undefined } });
      assert.deepEqual(await local.call('/api/v1/optim_step', {}), { metrics: {} });
      assert.equal(entry(local.times, '/api/v1/optim_step').calls, 1);
    },
  );
  await withServer(
    [json(200, { request_id: '8' }), json(400, { detail: 'Maximum number of LoRA adapters (4) reached' })],
    async (baseUrl) => {
      const local = new TinkerClient({ baseUrl, heartbeatMs: 0, retry: { sleep: async () => undefined } });
      const error = await local.call('/api/v1/create_model', {}).catch((caught: unknown) => caught);
      assert.ok(error instanceof TinkerError);
      assert.equal(error.details.requestId, '8');
      assert.equal(error.status, 400);
      assert.match(error.message, /Maximum number of LoRA adapters/);
    },
  );
  await withServer(
    [json(200, { request_id: '9' }), json(200, { error: 'bad tokens', category: 'user' })],
    async (baseUrl) => {
      const local = new TinkerClient({ baseUrl, heartbeatMs: 0, retry: { sleep: async () => undefined } });
      await assert.rejects(
        local.call('/api/v1/forward', {}),
        (error: unknown) => error instanceof TinkerError && /failed \(user\): bad tokens/.test(error.message),
      );
    },
  );
});
