/**
 * The gateway streams a built-in sampler's reply token by token (as `serve-policy` does), and what
 * it records is still exactly the ids and log-probs the model sampled: the real built-in model on
 * the real HTTP path, client and gateway in this process (a burst at the end shows as chunks that
 * all arrive at once, after the generation).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chatStopTokens, renderGenerationPrompt } from '../../chat/chat-template.ts';
import { at } from '../../core/indexing.ts';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import { BuiltinPolicy } from '../../policy/builtin-policy.ts';
import { startGateway, type Gateway } from './gateway.ts';
import { readStreamTiming, talkativeModel, type StreamTiming } from '../openai/streaming-test-fixture.ts';

/** Completion tokens of every generation here (one length: the decode step is compiled once, in `before`). */
const TOKENS = 300;
const question = [{ role: 'user' as const, content: 'talk' }];

/** POSTs a streamed chat completion in session `session` and times each content event as the client reads it. */
async function timedStream(gateway: Gateway, session: string): Promise<StreamTiming> {
  const started = performance.now();
  const response = await fetch(`${gateway.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-id': session },
    body: JSON.stringify({
      model: 'any',
      messages: question,
      max_tokens: TOKENS,
      temperature: 1,
      seed: 5,
      stream: true,
    }),
  });
  assert.equal(response.status, 200);
  return readStreamTiming(response, started);
}

describe('the gateway streams a built-in sampler token by token (tiny built-in model, real HTTP)', () => {
  let gateway: Gateway;
  let policy: BuiltinPolicy;
  before(async () => {
    policy = new BuiltinPolicy({ model: await talkativeModel(512) });
    gateway = await startGateway({ sampler: policy, batchWindowMs: 1 });
    await timedStream(gateway, 'warm-up'); // compiles prefill, decode step and merge for these shapes
    gateway.finishSession('warm-up');
  });
  after(() => gateway.close());

  test(`a streamed reply of ${TOKENS} tokens arrives spread over the generation, and the recorded call is what the model sampled`, async (t) => {
    const timing = await timedStream(gateway, 'streamed');
    const distinct = new Set(timing.contentAt.map((arrivalMs) => Math.round(arrivalMs))).size;
    const first = at(timing.contentAt, 0, 'content arrivals');
    const report = `${timing.contentAt.length} content chunks, first at ${first.toFixed(0)} ms, done at ${timing.doneAt.toFixed(0)} ms, ${distinct} distinct arrival ms`;
    t.diagnostic(report);
    assert.ok(timing.contentAt.length >= 32, report);
    assert.ok(distinct >= 4, report);
    assert.ok(first < timing.doneAt / 2, report);
    assert.ok(
      at(timing.contentAt, Math.floor(timing.contentAt.length / 2), 'content arrivals') < 0.75 * timing.doneAt,
      report,
    );

    const [call] = gateway.finishSession('streamed')!.calls;
    const prompt = renderGenerationPrompt(question).tokens;
    const direct = await policy.generate({
      prompt,
      maxNewTokens: TOKENS,
      temperature: 1,
      seed: 5,
      stopTokens: chatStopTokens(byteTokenizer),
    });
    assert.deepEqual(call!.prompt, prompt);
    assert.equal(call!.tokens.length, TOKENS);
    assert.deepEqual(call!.tokens, direct.tokens, 'each sampled id recorded once, in order');
    assert.deepEqual(call!.logprobs, direct.logprobs);
    assert.equal(timing.text, call!.content, 'the streamed text is the recorded reply');
  });
});
