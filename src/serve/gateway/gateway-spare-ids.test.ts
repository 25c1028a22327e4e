/**
 * A sampler (a remote one: TinkerPolicy, vLLM) may return an id past the tokenizer — a spare row
 * of the model's vocabulary. The gateway decodes it as U+FFFD and keeps the id as sampled, so the
 * client gets its reply (never a 400) and the session's next call, whose prompt holds that reply,
 * is answered too (a counted prefix break: the client sends U+FFFD back, not the id).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import type { GenerateRequest, Generation, Policy } from '../../policy/types.ts';
import { startGateway } from './gateway.ts';

const spare = byteTokenizer.vocabSize + 3;

/** Replies 'h', a spare id, 'i', then the end token: as a remote sampler would, text decoded by the sampler. */
function spareIdSampler(): Policy & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  const reply = (): Generation => {
    const tokens = [...byteTokenizer.encode('h'), spare, ...byteTokenizer.encode('i'), byteTokenizer.specialTokens.end];
    return { tokens, logprobs: tokens.map(() => -0.5), text: 'h\uFFFDi', finishReason: 'stop' };
  };
  return {
    tokenizer: byteTokenizer,
    contextWindow: 4096,
    requests,
    generate: async (request) => {
      requests.push(request);
      return reply();
    },
    generateBatch: async (batch) => {
      requests.push(...batch);
      return batch.map(reply);
    },
  };
}

test('gateway: a sampled id outside the tokenizer reads as U+FFFD; no 400, and the next call of the session is answered (a counted prefix break)', async () => {
  const policy = spareIdSampler();
  const gateway = await startGateway({ sampler: policy });
  try {
    const ask = async (messages: unknown[]) => {
      const response = await fetch(`${gateway.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-id': 'spare', authorization: 'Bearer client-key' },
        body: JSON.stringify({ model: 'agentrl', messages }),
      });
      return {
        status: response.status,
        json: (await response.json()) as { choices: { message: { content: string } }[] },
      };
    };
    const first = await ask([{ role: 'user', content: 'hello' }]);
    assert.equal(first.status, 200, JSON.stringify(first.json));
    assert.equal(first.json.choices[0]?.message.content, 'h\uFFFDi');
    const second = await ask([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: first.json.choices[0]?.message.content },
      { role: 'user', content: 'again' },
    ]);
    assert.equal(second.status, 200, JSON.stringify(second.json));
    // The client's copy of the reply holds U+FFFD, which re-renders as its UTF-8 bytes, not as the
    // spare id: the second call's prompt does not extend the first's ids: a prefix break (the session
    // records the calls apart, never a silent join) instead of a failed call.
    const [firstRequest, secondRequest] = policy.requests;
    assert.ok(firstRequest !== undefined && secondRequest !== undefined);
    assert.ok(!secondRequest.prompt.includes(spare));
  } finally {
    await gateway.close();
  }
});
