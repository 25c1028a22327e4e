/**
 * serve-policy serves any `Policy`, not only the built-in model: here an `OpenAIPolicy` in front of
 * a second serve-policy (itself serving a `ScriptedPolicy`), both on 127.0.0.1, called through the
 * real `openai` npm client — chat, tool calls (JSON and streamed) and log-probs arrive as the inner
 * policy sampled them; a max_tokens past the relay's budget is a 400.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { at } from '../../core/indexing.ts';
import { OpenAIPolicy } from '../../policy/openai-policy.ts';
import { ScriptedPolicy } from '../../policy/scripted-policy.ts';
import { startPolicyServer, type PolicyServer } from './policy-server.ts';
import { UNBOUNDED_COMPLETION_TOKENS } from './request-limits.ts';
import { readToolCallStream } from './streaming-test-fixture.ts';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const toolCallReply = '<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>';
const plainReply = 'Sunny in Paris.';
const logprob = -0.25;

/** The relay (serve-policy over an OpenAIPolicy) and the inner serve-policy behind it; what the inner policy was asked. */
interface Relay {
  inner: PolicyServer;
  outer: PolicyServer;
  openai: OpenAI;
  /** Each inner generation's budget (maxNewTokens), in order. */
  budgets: number[];
}

function serveRelayDuringSuite(): Relay {
  const relay = { budgets: [] as number[] } as Relay;
  // The inner model calls the tool when the rendered prompt offers it, else answers in text.
  const scripted = new ScriptedPolicy({
    reply: ({ messages }) =>
      messages.some((message) => message.content.includes('get_weather')) ? toolCallReply : plainReply,
    logprob,
    contextWindow: 1 << 16,
  });
  const inner = {
    tokenizer: scripted.tokenizer,
    contextWindow: scripted.contextWindow,
    generate: scripted.generate.bind(scripted),
    generateBatch: (requests: Parameters<ScriptedPolicy['generateBatch']>[0]) => {
      relay.budgets.push(...requests.map((request) => request.maxNewTokens));
      return scripted.generateBatch(requests);
    },
  };
  before(async () => {
    relay.inner = await startPolicyServer({ policy: inner, modelName: 'inner', port: 0, batchWindowMs: 1 });
    const upstream = new OpenAIPolicy({ baseURL: `${relay.inner.url}/v1`, model: 'inner', environment: {} });
    relay.outer = await startPolicyServer({ policy: upstream, modelName: 'relay', port: 0, batchWindowMs: 1 });
    relay.openai = new OpenAI({ baseURL: `${relay.outer.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  after(async () => {
    await relay.outer.close();
    await relay.inner.close();
  });
  return relay;
}

describe('serve-policy over an OpenAIPolicy (itself in front of a second serve-policy), openai npm client', () => {
  const relay = serveRelayDuringSuite();

  test('chat: the inner reply, finish stop, and per-token log-probs as the inner policy sampled them', async () => {
    const completion = await relay.openai.chat.completions.create({
      model: 'relay',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      logprobs: true,
    });
    const choice = at(completion.choices, 0, 'choices');
    assert.equal(choice.message.content, plainReply);
    assert.equal(choice.finish_reason, 'stop');
    const tokens = choice.logprobs?.content ?? [];
    assert.equal(tokens.map((token) => token.token).join(''), plainReply, 'one log-prob entry per byte token');
    assert.deepEqual(
      tokens.map((token) => token.logprob),
      tokens.map(() => logprob),
    );
    assert.equal(completion.usage?.completion_tokens, plainReply.length + 1, 'the reply and its stop id');
    assert.equal(
      relay.budgets.at(-1),
      UNBOUNDED_COMPLETION_TOKENS,
      'a policy without a window gets the default completion budget, not Infinity',
    );
  });

  test('tools: the tool call comes back as tool_calls (JSON and streamed), with its log-probs', async () => {
    const completion = await relay.openai.chat.completions.create({
      model: 'relay',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
      logprobs: true,
    });
    const choice = at(completion.choices, 0, 'choices');
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const calls = (choice.message.tool_calls ?? []).map((call) =>
      call.type === 'function' ? [call.function.name, JSON.parse(call.function.arguments)] : [],
    );
    assert.deepEqual(calls, [['get_weather', { city: 'Paris' }]]);
    assert.equal(choice.logprobs?.content?.length, toolCallReply.length);
    assert.ok(choice.logprobs?.content?.every((token) => token.logprob === logprob));

    const stream = await relay.openai.chat.completions.create({
      model: 'relay',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
      stream: true,
    });
    const streamed = await readToolCallStream(stream);
    assert.deepEqual(streamed.calls, [['get_weather', { city: 'Paris' }]]);
    assert.equal(streamed.finish, 'tool_calls');
  });

  test('a max_tokens past the default budget of a policy without a window is a 400 naming maxCompletionTokens', async () => {
    await assert.rejects(
      relay.openai.chat.completions.create({
        model: 'relay',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 1_000_000,
      }),
      (error: unknown) =>
        error instanceof OpenAI.BadRequestError &&
        /maxCompletionTokens/.test(error.message) &&
        /1000000/.test(error.message),
    );
  });
});
