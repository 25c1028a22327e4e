/**
 * The judges' transport against a raw node:http server on 127.0.0.1: retries (429 with
 * Retry-After, 5xx, a refused connection), no retry on 400/401/404, a hanging endpoint (timeout),
 * a 10 MB body, a body that is not a chat completion — each a `JudgeError` with its reason,
 * counted in `usage().failures`, never a score.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { JudgeError } from './judge-error.ts';
import { answer, completionBody, episode, serveRaw } from './judge-servers-fixture.ts';
import { parseRetryAfter } from './judge-http.ts';
import { pointwiseJudge } from './pointwise-judge.ts';

const context = episode('Say hi.', [['hi', '']]);
const fast = { retryDelayMs: 5, maxRetryDelayMs: 2_000 };
const judgeAt = (baseURL: string, extra: Record<string, unknown> = {}, apiKey?: string) =>
  pointwiseJudge({
    name: 'polite',
    endpoint: { baseURL, model: 'judge', ...(apiKey === undefined ? {} : { apiKey }) },
    rubric: 'Be polite.',
    ...fast,
    ...extra,
  });

async function rejectsWith(promise: Promise<unknown>, reason: string, pattern?: RegExp): Promise<JudgeError> {
  const error = await promise.then(
    () => assert.fail('the judge scored instead of failing'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof JudgeError, String(error));
  assert.equal(error.reason, reason, error.message);
  if (pattern !== undefined) assert.match(error.message, pattern);
  return error;
}

describe('judge transport: retries', () => {
  test('429 with Retry-After: 1 waits about a second, then the answer is the score', async () => {
    const server = await serveRaw((_request, response, index) =>
      index === 0
        ? answer(response, 429, '{"error":{"message":"slow down"}}', { 'retry-after': '1' })
        : answer(response, 200, completionBody('{"score": 0.75, "reason": "polite"}')),
    );
    after(() => server.close());
    const judge = judgeAt(server.baseURL, {}, 'secret-key');
    const started = performance.now();
    assert.equal(await judge(context), 0.75);
    assert.ok(performance.now() - started >= 950, 'waited for Retry-After');
    assert.equal(server.bodies.length, 2);
    const [first] = server.bodies;
    assert.equal(first?.model, 'judge');
    assert.equal(first?.temperature, 0);
    assert.equal(first?.max_tokens, 512);
    assert.equal(server.headers[0]?.authorization, 'Bearer secret-key');
    assert.deepEqual(judge.usage(), { calls: 1, cachedCalls: 0, promptTokens: 100, completionTokens: 10, failures: 0 });
  });

  test('500 on every attempt: fails after maxAttempts requests, counted, status in the error', async () => {
    const server = await serveRaw((_request, response) => answer(response, 500, '{"error":"boom"}'));
    after(() => server.close());
    const judge = judgeAt(server.baseURL, { maxAttempts: 3 });
    const error = await rejectsWith(judge(context), 'http', /HTTP 500.*attempt 3 of 3/);
    assert.equal(error.details.status, 500);
    assert.equal(server.bodies.length, 3);
    assert.equal(judge.usage().failures, 1);
  });

  test('400, 401, 404 are not retried; a redirect is not followed', async () => {
    for (const status of [400, 401, 404, 302]) {
      const server = await serveRaw((_request, response) =>
        answer(response, status, '{"error":"no"}', { location: 'http://127.0.0.1:2/elsewhere' }),
      );
      await rejectsWith(judgeAt(server.baseURL)(context), 'http', new RegExp(`HTTP ${status}`));
      assert.equal(server.bodies.length, 1, `status ${status}`);
      await server.close();
    }
  });

  test('a refused connection is retried, then fails as a network error', async () => {
    const server = await serveRaw(() => {});
    await server.close();
    await rejectsWith(judgeAt(server.baseURL, { maxAttempts: 2 })(context), 'network', /attempt 2 of 2/);
  });

  test('Retry-After as seconds or an HTTP date', () => {
    assert.equal(parseRetryAfter('3'), 3000);
    assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')), 10_000);
    assert.equal(parseRetryAfter('soon'), undefined);
    assert.equal(parseRetryAfter(null), undefined);
  });
});

describe('judge transport: hostile endpoints', () => {
  test('an endpoint that never answers: each attempt times out, then the call fails (bounded time)', async () => {
    const server = await serveRaw(() => {}); // holds every request open
    after(() => server.close());
    const started = performance.now();
    await rejectsWith(judgeAt(server.baseURL, { timeoutMs: 200, maxAttempts: 2 })(context), 'timeout', /within 200 ms/);
    assert.ok(performance.now() - started < 5_000, 'two 200 ms attempts, not the 60 s default');
    assert.equal(server.bodies.length, 2);
  });

  test('headers sent, then the body hangs: the same timeout covers it', async () => {
    const server = await serveRaw((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"choices": [');
    });
    after(() => server.close());
    await rejectsWith(judgeAt(server.baseURL, { timeoutMs: 200, maxAttempts: 1 })(context), 'timeout');
  });

  test('a 10 MB answer is cut at maxResponseBytes (declared or streamed), not retried', async () => {
    const huge = completionBody(`{"score": 1, "reason": "${'x'.repeat(10 * 1024 * 1024)}"}`);
    for (const chunked of [false, true]) {
      const server = await serveRaw((_request, response) => {
        response.writeHead(200, chunked ? {} : { 'content-length': String(Buffer.byteLength(huge)) });
        response.end(huge);
      });
      await rejectsWith(judgeAt(server.baseURL)(context), 'response-too-large', /over 1048576 bytes/);
      assert.equal(server.bodies.length, 1);
      await server.close();
    }
  });

  test('HTTP 200 whose body is not JSON, or not a chat completion', async () => {
    for (const body of ['<html>proxy error</html>', '{"choices": []}', '{"result": "1"}']) {
      const server = await serveRaw((_request, response) => answer(response, 200, body));
      await rejectsWith(judgeAt(server.baseURL)(context), 'not-a-completion');
      await server.close();
    }
  });
});
