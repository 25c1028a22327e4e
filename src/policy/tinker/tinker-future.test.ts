import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { TinkerError } from './tinker-error.ts';
import { FutureExpiredError, retrieveFuture, type TinkerRequestType } from './tinker-future.ts';

type Answer = (response: ServerResponse) => void;
const json =
  (status: number, body: unknown): Answer =>
  (response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };

interface Poll {
  body: { request_id: string; allow_metadata_only: boolean };
  headers: Record<string, string | string[] | undefined>;
}

/** Polls `requestType`'s future against a server answering each poll with the next of `answers` (the last repeats). */
async function poll(answers: Answer[], requestType: TinkerRequestType = 'OptimStep', billingPauseWindowMs?: number) {
  const polls: Poll[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on('end', () => {
      polls.push({ body: JSON.parse(text) as Poll['body'], headers: request.headers });
      (answers[Math.min(polls.length - 1, answers.length - 1)] ?? json(500, {}))(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sleeps: number[] = [];
  let clock = 0;
  const retry = {
    sleep: async (ms: number) => {
      sleeps.push(ms);
      clock += ms;
    },
    now: () => clock,
    ...(billingPauseWindowMs === undefined ? {} : { billingPauseWindowMs }),
  };
  try {
    const result = await retrieveFuture(
      { requestId: 'r1', requestType, roundtripSeconds: 0.25 },
      {
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        headers: { 'X-API-Key': 'tml-x' },
        retry,
      },
    ).then(
      (value): { value?: unknown; error?: unknown } => ({ value }),
      (error: unknown): { value?: unknown; error?: unknown } => ({ error }),
    );
    return { ...result, polls, sleeps };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test("408 (the long-poll's timeout), 5xx and try_again poll again at once; complete_metadata asks for the payload", async () => {
  const { value, polls, sleeps } = await poll([
    json(408, { type: 'try_again', queue_state: 'active' }),
    json(503, { detail: 'restarting' }),
    json(200, { type: 'try_again', request_id: 'r1', queue_state: 'paused_capacity' }),
    json(200, { status: 'complete_metadata', response_payload_size: 10 }),
    json(200, { metrics: { grad_norm: 2 } }),
  ]);
  assert.deepEqual(value, { metrics: { grad_norm: 2 } });
  assert.deepEqual(sleeps, []);
  assert.deepEqual(
    polls.map((entry) => entry.body.allow_metadata_only),
    [true, true, true, true, false],
  );
  assert.deepEqual(
    polls.map((entry) => entry.headers['x-tinker-request-iteration']),
    ['0', '1', '2', '3', '4'],
  );
  assert.equal(polls[0]?.headers['x-tinker-request-type'], 'OptimStep');
  assert.equal(polls[0]?.headers['x-tinker-create-promise-roundtrip-time'], '0.25');
  assert.equal(polls[1]?.headers['x-tinker-create-promise-roundtrip-time'], undefined);
  assert.equal(polls[0]?.headers['x-api-key'], 'tml-x');
  assert.equal(polls[0]?.headers.accept, 'application/json', 'an optim_step result is JSON');
});

test('429 and dropped connections back off 1, 2, 4 s…; a bare 400 is retried 3 times, the 4th fails', async () => {
  const dropped: Answer = (response) => response.socket?.destroy();
  const backoff = await poll([json(429, {}), dropped, json(429, {}), json(200, { ok: 1 })]);
  assert.deepEqual(backoff.sleeps, [1000, 2000, 4000]);
  const fourBad = await poll([json(400, {}), json(400, {}), json(400, {}), json(400, {}), json(200, { ok: 1 })]);
  assert.ok(fourBad.error instanceof TinkerError && /HTTP 400/.test(fourBad.error.message));
  assert.equal(fourBad.polls.length, 4);
  const threeBad = await poll([json(400, {}), json(400, {}), json(400, {}), json(200, { ok: 1 })]);
  assert.deepEqual(threeBad.value, { ok: 1 });
});

test('410 is FutureExpiredError (resubmit); 404 and a failed request are named errors; 402 pauses 5 s within the billing window', async () => {
  const expired = await poll([json(410, { detail: 'gone' })]);
  assert.ok(expired.error instanceof FutureExpiredError);
  const missing = await poll([json(404, { detail: 'no such future' })]);
  assert.ok(
    missing.error instanceof TinkerError &&
      !(missing.error instanceof FutureExpiredError) &&
      /404/.test(missing.error.message),
  );
  const failed = await poll([json(200, { error: 'out of memory', category: 'server' })]);
  assert.ok(failed.error instanceof TinkerError && /failed \(server\): out of memory/.test(failed.error.message));
  const billing = await poll([json(402, {}), json(402, {}), json(200, { ok: 1 })]);
  assert.deepEqual(billing.value, { ok: 1 });
  assert.deepEqual(billing.sleeps, [5000, 5000]);
  const overdue = await poll([json(402, { detail: 'unpaid' })], 'OptimStep', 9000);
  assert.ok(overdue.error instanceof TinkerError && /402/.test(overdue.error.message));
  assert.deepEqual(overdue.sleeps, [5000, 5000]);
});

test("a sample asks for protobuf and decodes the SDK's SampleResponse bytes; a JSON answer is read too", async () => {
  const bytes = Buffer.from('0a1c120c0500000006000000070000001a0c000000bf0000a0bf000000c0', 'hex');
  const protobuf: Answer = (response) => {
    response.writeHead(200, { 'content-type': 'application/x-protobuf' });
    response.end(bytes);
  };
  const { value, polls } = await poll([protobuf], 'Sample');
  assert.equal(polls[0]?.headers.accept, 'application/x-protobuf');
  assert.deepEqual(value, {
    sequences: [{ tokens: [5, 6, 7], logprobs: [-0.5, -1.25, -2], stop_reason: 'stop' }],
    prompt_logprobs: null,
    prompt_cache_hit_tokens: 0,
  });
  const jsonAnswer = await poll([json(200, { sequences: [] })], 'Sample');
  assert.deepEqual(jsonAnswer.value, { sequences: [] });
});
