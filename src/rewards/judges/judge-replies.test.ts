/**
 * What a judge accepts as a reply, what its budget and its cache do — over a raw node:http server
 * on 127.0.0.1 that answers the content each test gives: non-JSON, NaN, 1e999, a string score, a
 * score of 7 are failures (never clamped, never 0); the token budget refuses calls once spent and
 * refills on `takeUsage()`; a cached episode sends no request.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { JudgeError } from './judge-error.ts';
import { JudgeCache, judgeCacheKey } from './judge-cache.ts';
import { answer, completionBody, episode, serveRaw } from './judge-servers-fixture.ts';
import { pointwiseJudge } from './pointwise-judge.ts';

const context = (n: number) => episode(`Task ${n}`, [[`answer ${n}`, '']]);

/** A raw server whose every answer carries `content` (usage 100 + 10 tokens). */
async function judgeReplying(content: () => string, extra: Record<string, unknown> = {}) {
  const server = await serveRaw((_request, response) => answer(response, 200, completionBody(content())));
  after(() => server.close());
  const judge = pointwiseJudge({
    name: 'graded',
    endpoint: { baseURL: server.baseURL, model: 'judge' },
    rubric: 'Grade it.',
    retryDelayMs: 5,
    ...extra,
  });
  return { server, judge };
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof JudgeError, `expected a JudgeError, got ${String(error)}`);
  return error.reason;
}

describe('judge replies: the strict format', () => {
  test('accepted: the JSON object alone, or alone inside a ```json fence', async () => {
    let content = '{"score": 0.5, "reason": "half"}';
    const { judge } = await judgeReplying(() => content);
    assert.equal(await judge(context(1)), 0.5);
    content = '```json\n{"score": 1, "reason": "all"}\n```';
    assert.equal(await judge(context(2)), 1);
    content = '  {"score": 0}  ';
    assert.equal(await judge(context(3)), 0);
  });

  test('refused: prose, NaN, 1e999, a string score, no score, text around the JSON, an array — malformed-reply', async () => {
    const bad = [
      'Score: 0.9',
      '{"score": NaN}',
      '{"score": 1e999}',
      '{"score": -1e999}',
      '{"score": "0.8"}',
      '{"reason": "no score"}',
      'Here you go: {"score": 1}',
      '[{"score": 1}]',
      '',
    ];
    let content = '';
    const { judge } = await judgeReplying(() => content);
    for (const [i, reply] of bad.entries()) {
      content = reply;
      assert.equal(await reasonOf(judge(context(i))), 'malformed-reply', reply);
    }
    assert.equal(judge.usage().failures, bad.length);
    assert.equal(judge.usage().calls, bad.length, 'every refusal still cost a request');
  });

  test('a score outside [0, 1] is refused (out-of-range), not clamped', async () => {
    let content = '{"score": 7}';
    const { judge } = await judgeReplying(() => content);
    assert.equal(await reasonOf(judge(context(1))), 'out-of-range');
    content = '{"score": -0.01}';
    assert.equal(await reasonOf(judge(context(2))), 'out-of-range');
  });

  test('a reply that failed is not cached: the same episode is asked again', async () => {
    let content = 'not json';
    const { judge, server } = await judgeReplying(() => content);
    assert.equal(await reasonOf(judge(context(1))), 'malformed-reply');
    content = '{"score": 0.25}';
    assert.equal(await judge(context(1)), 0.25);
    assert.equal(server.bodies.length, 2);
  });
});

describe('judge budget and cache', () => {
  test('maxTokensPerIteration: past it calls fail as budget-exhausted without a request; takeUsage refills it', async () => {
    const { judge, server } = await judgeReplying(() => '{"score": 1}', { maxTokensPerIteration: 150 });
    assert.equal(await judge(context(1)), 1); // 110 tokens spent
    assert.equal(await judge(context(2)), 1); // 220: the bound is checked before each call
    assert.equal(await reasonOf(judge(context(3))), 'budget-exhausted');
    assert.equal(server.bodies.length, 2);
    assert.deepEqual(judge.takeUsage(), {
      calls: 2,
      cachedCalls: 0,
      promptTokens: 200,
      completionTokens: 20,
      failures: 1,
    });
    assert.equal(await judge(context(1)), 1, 'cached: costs nothing');
    assert.equal(await judge(context(3)), 1, 'a new iteration: budget refilled');
    assert.equal(server.bodies.length, 3);
  });

  test('concurrent identical episodes share one request; at most maxConcurrentCalls in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const server = await serveRaw((_request, response) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        answer(response, 200, completionBody('{"score": 1}'));
      }, 30);
    });
    after(() => server.close());
    const endpoint = { baseURL: server.baseURL, model: 'judge' };
    const judge = pointwiseJudge({ name: 'busy', endpoint, rubric: 'r', maxConcurrentCalls: 2 });
    const scores = await Promise.all([1, 1, 1, 2, 3, 4, 5].map((n) => judge(context(n))));
    assert.deepEqual(scores, [1, 1, 1, 1, 1, 1, 1]);
    assert.equal(server.bodies.length, 5);
    assert.equal(most, 2);
    assert.equal(judge.usage().cachedCalls, 2);
  });

  test('the cache key covers model, messages and sampling; the cache evicts the least recently used', () => {
    const messages = [{ role: 'user', content: 'x' }];
    const key = judgeCacheKey({ model: 'm', messages, sampling: { temperature: 0, max_tokens: 5 } });
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.equal(key, judgeCacheKey({ model: 'm', messages, sampling: { max_tokens: 5, temperature: 0 } }));
    assert.notEqual(key, judgeCacheKey({ model: 'n', messages, sampling: { temperature: 0, max_tokens: 5 } }));
    assert.notEqual(key, judgeCacheKey({ model: 'm', messages, sampling: { temperature: 1, max_tokens: 5 } }));
    assert.notEqual(key, judgeCacheKey({ model: 'm', messages: [{ role: 'system', content: 'x' }], sampling: {} }));
    const cache = new JudgeCache<number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1); // a is now the most recent
    cache.set('c', 3);
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.size, 2);
    const off = new JudgeCache<number>(0);
    off.set('a', 1);
    assert.equal(off.get('a'), undefined);
  });
});
