/**
 * Cancelling an OpenAIPolicy's generation: its `generateBatch` signal aborts the HTTP requests in
 * flight to a real upstream on 127.0.0.1 (the upstream sees each request's connection close), and
 * serve-policy in front of it cancels the upstream request once its own client leaves.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { renderGenerationPrompt } from '../chat/chat-template.ts';
import { startPolicyServer } from '../serve/openai/policy-server.ts';
import { OpenAIPolicy } from './openai-policy.ts';

/** A chat server on 127.0.0.1 that takes requests and never answers, or answers 503 (`busy`); it records each request's connection closing. */
class SilentUpstream {
  /** One entry per unanswered request: resolves when its connection closes. */
  readonly closed: Promise<void>[] = [];
  /** Requests received, answered or not. */
  requests = 0;
  /** Answer 503 instead of nothing. */
  busy = false;
  private readonly open = new Set<ServerResponse>();
  private arrivals: (() => void)[] = [];
  private readonly server = createServer((request, response) => {
    request.resume();
    this.requests++;
    if (this.busy) {
      response.writeHead(503, { 'content-type': 'application/json' }).end('{"error": {"message": "busy"}}');
    } else {
      this.open.add(response);
      this.closed.push(
        new Promise((resolve) =>
          response.once('close', () => {
            assert.equal(response.writableFinished, false, 'closed by the client, never answered');
            this.open.delete(response);
            resolve();
          }),
        ),
      );
    }
    for (const arrived of this.arrivals.splice(0)) arrived();
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Resolves once `count` requests have arrived in all. */
  async received(count: number): Promise<void> {
    while (this.requests < count) await new Promise<void>((resolve) => this.arrivals.push(resolve));
  }

  /** Requests whose connection is still open. */
  get waiting(): number {
    return this.open.size;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const prompt = renderGenerationPrompt([{ role: 'user', content: 'hello' }]).tokens;

describe('OpenAIPolicy: an aborted signal cancels its upstream requests (real HTTP on 127.0.0.1)', () => {
  const upstream = new SilentUpstream();
  let baseURL = '';
  before(async () => {
    baseURL = await upstream.start();
  });
  after(() => upstream.stop());

  test('generateBatch: both requests in flight are closed and the call rejects with the abort reason', async () => {
    const policy = new OpenAIPolicy({ baseURL, model: 'slow', maxRetries: 0 });
    const controller = new AbortController();
    const reason = new Error('nobody waits');
    const generating = policy.generateBatch(
      [
        { prompt, maxNewTokens: 8 },
        { prompt, maxNewTokens: 8 },
      ],
      { signal: controller.signal },
    );
    await upstream.received(2);
    controller.abort(reason);
    await assert.rejects(generating, (error) => error === reason);
    await Promise.all(upstream.closed.slice(0, 2));
    assert.equal(upstream.waiting, 0);
  });

  test('already aborted: nothing is sent; a retry wait is cut short too', async () => {
    const before = upstream.requests;
    const policy = new OpenAIPolicy({ baseURL, model: 'slow', maxRetries: 3, retryDelayMs: 600_000 });
    await assert.rejects(
      policy.generateBatch([{ prompt, maxNewTokens: 4 }], { signal: AbortSignal.abort(new Error('gone')) }),
      /gone/,
    );
    assert.equal(upstream.requests, before, 'no request sent');
    upstream.busy = true;
    const controller = new AbortController();
    const generating = policy.chat({ messages: [{ role: 'user', content: 'hi' }], signal: controller.signal });
    await upstream.received(before + 1);
    // Aborted while the 503 comes back or during the 10-minute backoff after it: either way the
    // call rejects with the reason at once (a wait that ignored the signal would hang this test).
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort(new Error('stop waiting'));
    await assert.rejects(generating, /stop waiting/);
    upstream.busy = false;
  });
});

describe('serve-policy in front of an OpenAIPolicy: a client that leaves cancels the upstream request', () => {
  const upstream = new SilentUpstream();
  let baseURL = '';
  before(async () => {
    baseURL = await upstream.start();
  });
  after(() => upstream.stop());

  for (const stream of [false, true]) {
    test(`${stream ? 'streamed' : 'not streamed'}: the upstream sees its request closed`, async () => {
      const server = await startPolicyServer({
        policy: new OpenAIPolicy({ baseURL, model: 'slow', maxRetries: 0 }),
        modelName: 'front',
        port: 0,
        batchWindowMs: 1,
      });
      try {
        const sent = upstream.closed.length;
        const received = upstream.requests;
        const leave = new AbortController();
        const response = fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'front', messages: [{ role: 'user', content: 'go' }], max_tokens: 8, stream }),
          signal: leave.signal,
        });
        await upstream.received(received + 1); // the batch is running: its request is upstream
        leave.abort();
        await response.then((reply) => reply.body?.cancel()).catch(() => {});
        await upstream.closed[sent]; // the upstream's connection closed without an answer
        assert.equal(upstream.waiting, 0);
      } finally {
        await server.close();
      }
    });
  }
});
