import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { TinkerError } from './tinker-error.ts';
import { answerJson, sendCall, sendRequest } from './tinker-http.ts';

interface Seen {
  method: string;
  key: string | undefined;
  retryCount: string | undefined;
  body: string;
}

/** A loopback server: `handle(request, seen so far)` answers each request (retry behaviour only). */
async function withServer(
  handle: (request: IncomingMessage, response: ServerResponse, seen: Seen[]) => void,
  run: (baseUrl: string, seen: Seen[]) => Promise<void>,
): Promise<void> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({
        method: request.method ?? '',
        key: request.headers['x-idempotency-key'] as string | undefined,
        retryCount: request.headers['x-stainless-retry-count'] as string | undefined,
        body: Buffer.concat(chunks).toString(),
      });
      handle(request, response, seen);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

test('a POST whose answer is lost is retried with the SAME idempotency key, and the server applies it once', async () => {
  // The server applies a request the first time it sees its key and replays the stored answer after;
  // the first answer is lost (the connection dropped after the request was applied).
  const applied = new Map<string, unknown>();
  let sessions = 0;
  await withServer(
    (_request, response, seen) => {
      const { key } = seen.at(-1) ?? { key: undefined };
      let answer = key === undefined ? undefined : applied.get(key);
      if (answer === undefined) {
        sessions += 1;
        answer = { session_id: `s${sessions}` };
        if (key !== undefined) applied.set(key, answer);
      }
      if (seen.length === 1) response.socket?.destroy();
      else json(response, 200, answer);
    },
    async (baseUrl, seen) => {
      const sleeps: number[] = [];
      const answer = await sendCall(
        { baseUrl, method: 'POST', path: '/api/v1/create_session', body: { tags: [] } },
        { sleep: async (ms) => void sleeps.push(ms), random: () => 0 },
      );
      assert.deepEqual(answerJson(answer, 'POST /api/v1/create_session'), { session_id: 's1' });
      assert.equal(seen.length, 2);
      assert.match(seen[0]?.key ?? '', /^agentrl-retry-[0-9a-f-]{36}$/);
      assert.equal(seen[1]?.key, seen[0]?.key, 'the retry carries the same key');
      assert.deepEqual(
        seen.map((entry) => entry.retryCount),
        ['0', '1'],
      );
      assert.equal(sessions, 1, 'applied once');
      assert.deepEqual(sleeps, [500]);
    },
  );
});

test('429 waits what retry-after says; x-should-retry: false stops transport retries; a 400 and a 404 are not retried; GET carries no key', async () => {
  await withServer(
    (request, response, seen) => {
      if (request.url === '/limited')
        return seen.length === 1
          ? json(response, 429, { detail: 'slow down' }, { 'retry-after': '2' })
          : json(response, 200, {});
      if (request.url === '/no-retry') return json(response, 503, { detail: 'down' }, { 'x-should-retry': 'false' });
      if (request.url === '/bad') return json(response, 400, { detail: 'bad field' });
      json(response, 404, { detail: 'no such route' });
    },
    async (baseUrl, seen) => {
      const sleeps: number[] = [];
      const options = { sleep: async (ms: number) => void sleeps.push(ms), random: () => 0 };
      await sendRequest({ baseUrl, method: 'POST', path: '/limited', body: {} }, options);
      assert.deepEqual(sleeps, [2000]);
      // x-should-retry: false stops the transport's retries (the call layer still retries a 503, as the SDK's execute_with_retries does).
      let before = seen.length;
      await assert.rejects(
        sendRequest({ baseUrl, method: 'POST', path: '/no-retry', body: {} }, options),
        /HTTP 503 after 1 attempt:/,
      );
      assert.equal(seen.length, before + 1);
      before = seen.length;
      await assert.rejects(
        sendCall({ baseUrl, method: 'POST', path: '/bad', body: {} }, options),
        /HTTP 400 after 1 attempt:/,
      );
      assert.equal(seen.length, before + 1, 'a 400 is never retried');
      await assert.rejects(sendRequest({ baseUrl, method: 'GET', path: '/missing' }, options), /HTTP 404/);
      assert.equal(seen.at(-1)?.key, undefined);
    },
  );
});

test('5xx: 10 transport retries, then call retries of min(2^k, 30) s until 300 s have passed, same key throughout', async () => {
  await withServer(
    (_request, response) => json(response, 503, { detail: 'overloaded' }),
    async (baseUrl, seen) => {
      let clock = 0;
      const sleeps: number[] = [];
      const options = {
        sleep: async (ms: number) => {
          sleeps.push(ms);
          clock += ms;
        },
        now: () => clock,
        random: () => 0,
      };
      await assert.rejects(
        sendCall({ baseUrl, method: 'POST', path: '/api/v1/optim_step', body: {} }, options),
        /HTTP 503 after 11 attempts/,
      );
      const transport = [500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000, 10_000, 10_000];
      assert.deepEqual(sleeps.slice(0, 10), transport);
      assert.equal(sleeps[10], 1000, 'the first call retry waits 2^0 s');
      assert.ok(clock >= 300_000 && clock < 400_000, `stopped at the 300 s window (clock ${clock})`);
      assert.equal(new Set(seen.map((entry) => entry.key)).size, 1);
    },
  );
});

test('402 pauses 5 s at a time and carries on; past the billing window it fails naming billing', async () => {
  await withServer(
    (request, response, seen) => {
      if (request.url === '/paid')
        return seen.length <= 2 ? json(response, 402, { detail: 'billing' }) : json(response, 200, { ok: true });
      json(response, 402, { detail: 'billing' });
    },
    async (baseUrl) => {
      let clock = 0;
      const sleeps: number[] = [];
      const options = {
        sleep: async (ms: number) => {
          sleeps.push(ms);
          clock += ms;
        },
        now: () => clock,
        billingPauseWindowMs: 12_000,
      };
      await sendCall({ baseUrl, method: 'POST', path: '/paid', body: {} }, options);
      assert.deepEqual(sleeps, [5000, 5000]);
      await assert.rejects(
        sendCall({ baseUrl, method: 'POST', path: '/unpaid', body: {} }, options),
        /billing \(HTTP 402\) longer than 12 s/,
      );
    },
  );
});

test('no answer within the timeout is retried; a refused connection is a TinkerError naming the URL', async () => {
  await withServer(
    (_request, response, seen) => {
      if (seen.length > 1) json(response, 200, { ok: true });
    },
    async (baseUrl, seen) => {
      await sendRequest(
        { baseUrl, method: 'POST', path: '/slow', body: {} },
        { timeoutMs: 200, sleep: async () => {} },
      );
      assert.equal(seen.length, 2);
    },
  );
  await assert.rejects(
    sendRequest(
      { baseUrl: 'http://127.0.0.1:9', method: 'POST', path: '/x', body: {} },
      { maxRetries: 1, sleep: async () => {} },
    ),
    (error: unknown) =>
      error instanceof TinkerError &&
      error.status === undefined &&
      /after 2 attempts \(http:\/\/127\.0\.0\.1:9\/x\)/.test(error.message),
  );
});
