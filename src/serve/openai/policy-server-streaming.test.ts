/**
 * serve-policy streams tokens as they are sampled and stays responsive while it generates, with
 * the real built-in model on the real HTTP path (client and server share this process, so a
 * blocked event loop shows as late chunks and late timers).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import { at } from '../../core/indexing.ts';
import { BuiltinPolicy } from '../../policy/builtin-policy.ts';
import { startPolicyServer, type PolicyServer } from './policy-server.ts';
import { readStreamTiming, talkativeModel, type StreamTiming } from './streaming-test-fixture.ts';

/** Completion tokens of every generation here (one length: the decode step is compiled once, in `before`). */
const TOKENS = 500;

/** POSTs a streamed chat completion and times each content event as the client reads it. */
async function timedStream(
  server: PolicyServer,
  maxTokens: number,
  onFirstContent?: () => void,
): Promise<StreamTiming> {
  const started = performance.now();
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'tiny',
      messages: [{ role: 'user', content: 'talk' }],
      max_tokens: maxTokens,
      seed: 5,
      stream: true,
    }),
  });
  assert.equal(response.status, 200);
  return readStreamTiming(response, started, onFirstContent);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Up to five times while `generating()`: sleeps 15 ms, then asks /health. Timers are the event loop's
 * pulse: one that fires far past its time (a lag) means the loop was blocked. The /health times
 * counted are those answered while the generation still ran.
 */
async function probeWhileGenerating(
  server: PolicyServer,
  generating: () => boolean,
): Promise<{ lags: number[]; healthMs: number[] }> {
  const lags: number[] = [];
  const healthMs: number[] = [];
  for (let i = 0; i < 5 && generating(); i++) {
    const asleep = performance.now();
    await sleep(15);
    lags.push(performance.now() - asleep - 15);
    const asked = performance.now();
    const health = await fetch(`${server.url}/health`);
    assert.deepEqual(await health.json(), { status: 'ok' });
    if (generating()) healthMs.push(performance.now() - asked);
  }
  return { lags, healthMs };
}

describe('serve-policy streams while it samples and stays responsive (tiny built-in model, real HTTP)', () => {
  let server: PolicyServer;
  before(async () => {
    const model = await talkativeModel(1024);
    server = await startPolicyServer({
      policy: new BuiltinPolicy({ model }),
      modelName: 'tiny',
      port: 0,
      batchWindowMs: 1,
    });
    await timedStream(server, TOKENS); // compiles prefill, decode step and merge for these shapes
  });
  after(() => server.close());

  test(`a streamed completion of ${TOKENS} tokens arrives spread over the generation, not in one burst at the end`, async (t) => {
    const timing = await timedStream(server, TOKENS);
    assert.ok(timing.contentAt.length >= 32, `${timing.contentAt.length} content chunks`);
    const distinct = new Set(timing.contentAt.map((arrivalMs) => Math.round(arrivalMs))).size;
    const first = at(timing.contentAt, 0, 'content arrivals');
    const report = `first content at ${first.toFixed(0)} ms, done at ${timing.doneAt.toFixed(0)} ms, ${distinct} distinct arrival ms`;
    t.diagnostic(report);
    assert.ok(distinct >= 4, report);
    assert.ok(first < timing.doneAt / 2, report);
    // The content chunks are spread: half of them have arrived before 3/4 of the time to the end.
    assert.ok(
      at(timing.contentAt, Math.floor(timing.contentAt.length / 2), 'content arrivals') < 0.75 * timing.doneAt,
      report,
    );
  });

  test('/health and a second request are answered quickly while a generation of a few seconds runs', async (t) => {
    let generating = true;
    let started!: () => void;
    const firstContent = new Promise<void>((resolve) => (started = resolve));
    const long = timedStream(server, TOKENS, () => started()).finally(() => {
      generating = false;
    });
    await firstContent;
    // A second request is accepted (status and headers; its tokens come after the first's batch).
    const askedSecond = performance.now();
    const second = fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'tiny',
        messages: [{ role: 'user', content: 'next' }],
        max_tokens: 4,
        stream: true,
      }),
    }).then((response) => ({ response, acceptMs: performance.now() - askedSecond, duringGeneration: generating }));
    const { lags, healthMs } = await probeWhileGenerating(server, () => generating);
    const lagText = lags.map((lag) => lag.toFixed(0)).join(', ');
    assert.ok(
      healthMs.length >= 3,
      `only ${healthMs.length} /health answers came while the generation ran (event-loop lags ${lagText} ms)`,
    );
    const { response, acceptMs, duringGeneration } = await second;
    assert.equal(response.status, 200);
    assert.ok(
      duringGeneration,
      `the second request was accepted (in ${acceptMs.toFixed(0)} ms) only after the first generation ended`,
    );
    const timing = await long;
    const report = `/health ${healthMs.map((ms) => ms.toFixed(0)).join(', ')} ms; timer lags ${lagText} ms; second request accepted in ${acceptMs.toFixed(0)} ms; generation ${timing.doneAt.toFixed(0)} ms`;
    t.diagnostic(report);
    assert.ok(Math.max(...healthMs) < 200, report);
    assert.ok(Math.max(...lags) < 200, report);
    assert.ok(acceptMs < 200, report);
    assert.ok(Math.max(...healthMs) < timing.doneAt / 5, report);
    await response.text();
  });
});
