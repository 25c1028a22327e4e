import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { ChatFormat } from '../../chat/chat-format.ts';
import { jinjaChatFormat } from '../../chat/jinja-chat-format.ts';
import { tinyChatmlFormat, tinyChatmlTemplate } from '../../chat/tiny-chatml.ts';
import { at } from '../../core/indexing.ts';
import type { Policy } from '../../policy/types.ts';
import { startPolicyServer, type PolicyServer } from './policy-server.ts';
import { streamingScriptedPolicy } from './streaming-scripted-policy-fixture.ts';
import { readToolCallStream } from './streaming-test-fixture.ts';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** A policy in `format` that writes `reply` token by token, then its stop id; it keeps the prompts it got. */
function scriptedReply(format: ChatFormat, reply: string, prompts: number[][]): Policy {
  return streamingScriptedPolicy({
    reply: [reply],
    chatFormat: format,
    tokenizer: format.tokenizer,
    contextWindow: 4096,
    logprob: -0.5,
    onRequest: (request) => {
      prompts.push([...request.prompt]);
      assert.equal(request.stopTokens?.[0], 2, 'the reply stops at the model’s <|im_end|>');
    },
  });
}

function functionCalls(message: OpenAI.Chat.Completions.ChatCompletionMessage): [string, unknown][] {
  return (message.tool_calls ?? []).map((call) =>
    call.type === 'function' ? [call.function.name, JSON.parse(call.function.arguments)] : ['', null],
  );
}

/** A tiny ChatML model's format (SmolLM2-style template, smollm2 tool-call family) served with a scripted two-call reply; the prompts it got. */
interface SmolServing {
  format: ChatFormat;
  reply: string;
  prompts: number[][];
  server: PolicyServer;
  openai: OpenAI;
}

/** Serves the scripted SmolLM2 tool-call reply for the tests of one describe: started before them, closed after. */
function serveSmolToolCallsDuringSuite(): SmolServing {
  const serving = {
    format: tinyChatmlFormat(),
    reply:
      '<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_weather", "arguments": {"city": "Oslo"}}]</tool_call>',
    prompts: [] as number[][],
  } as SmolServing;
  before(async () => {
    serving.server = await startPolicyServer({
      policy: scriptedReply(serving.format, serving.reply, serving.prompts),
      modelName: 'smol',
      port: 0,
      batchWindowMs: 1,
    });
    serving.openai = new OpenAI({ baseURL: `${serving.server.url}/v1`, apiKey: 'unused' });
  });
  after(() => serving.server.close());
  return serving;
}

describe('serve-policy in a model’s own chat format (tiny ChatML model, real HTTP, openai SDK): tool calls', () => {
  const serving = serveSmolToolCallsDuringSuite();

  test('the prompt is the model’s template with the tools; a SmolLM2 <tool_call>[…] reply comes back as tool_calls', async () => {
    const { format, reply, prompts, openai } = serving;
    const messages = [{ role: 'user' as const, content: 'Weather in Paris and Oslo?' }];
    const completion = await openai.chat.completions.create({ model: 'smol', messages, tools: [weatherTool] });
    assert.deepEqual(
      prompts.at(-1),
      format.render(messages, { tools: [weatherTool], addGenerationPrompt: true }).tokens,
    );
    assert.match(
      format.tokenizer.decode(prompts.at(-1)!),
      /^<\|im_start\|>system\nYou can call these tools:\n<tools>\n\{"name": "get_weather"[\s\S]*<\|im_start\|>assistant\n$/,
    );
    const choice = at(completion.choices, 0, 'choices');
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    assert.deepEqual(functionCalls(choice.message), [
      ['get_weather', { city: 'Paris' }],
      ['get_weather', { city: 'Oslo' }],
    ]);
    assert.equal(new Set(choice.message.tool_calls!.map((call) => call.id)).size, 2, 'each call has its own id');
    assert.equal(
      completion.usage!.completion_tokens,
      format.tokenizer.encode(reply).length + 1,
      'the stop id counts in usage',
    );
  });

  test('streamed: the block is held back, then both calls arrive as tool_calls deltas', async () => {
    const { openai } = serving;
    const streamed = await readToolCallStream(
      await openai.chat.completions.create({
        model: 'smol',
        messages: [{ role: 'user', content: 'Weather?' }],
        tools: [weatherTool],
        stream: true,
      }),
    );
    assert.deepEqual(streamed, {
      content: '',
      calls: [
        ['get_weather', { city: 'Paris' }],
        ['get_weather', { city: 'Oslo' }],
      ],
      finish: 'tool_calls',
    });
  });
});

describe('serve-policy in a model’s own chat format (tiny ChatML model, real HTTP, openai SDK): tool results and plain text', () => {
  const serving = serveSmolToolCallsDuringSuite();

  test('a reply to a tool result renders the call and the result in the model’s format; without tools the block is text', async () => {
    const { format, reply, prompts, openai } = serving;
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ];
    await openai.chat.completions.create({ model: 'smol', messages, tools: [weatherTool] });
    const text = format.tokenizer.decode(prompts.at(-1)!);
    assert.match(
      text,
      /<\|im_start\|>assistant\n<tool_call>\[\{"name": "get_weather", "arguments": \{"city": "Paris"\}\}\]<\/tool_call><\|im_end\|>\n<\|im_start\|>tool\nsunny<\|im_end\|>\n<\|im_start\|>assistant\n$/,
    );
    const plain = await openai.chat.completions.create({ model: 'smol', messages: [{ role: 'user', content: 'x' }] });
    const plainChoice = at(plain.choices, 0, 'choices');
    assert.equal(plainChoice.message.content, reply);
    assert.equal(plainChoice.finish_reason, 'stop');
  });
});

test('serve-policy with a Qwen-family format: <tool_call>\\n{…}\\n</tool_call> blocks become tool_calls', async () => {
  const tiny = tinyChatmlFormat();
  const format = jinjaChatFormat({
    name: 'tiny-qwen',
    tokenizer: tiny.tokenizer,
    template: tinyChatmlTemplate,
    specialTokenStrings: { bos_token: '<|im_start|>', eos_token: '<|im_end|>' },
    stopTokens: [2],
    toolCallFamily: 'qwen',
  });
  const reply = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
  const server = await startPolicyServer({
    policy: scriptedReply(format, reply, []),
    modelName: 'qwen',
    port: 0,
    batchWindowMs: 1,
  });
  try {
    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused' });
    const completion = await openai.chat.completions.create({
      model: 'qwen',
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [weatherTool],
    });
    const choice = at(completion.choices, 0, 'choices');
    assert.deepEqual(functionCalls(choice.message), [['get_weather', { city: 'Paris' }]]);
    assert.equal(choice.message.content, 'Checking.\n');
    const streamed = await readToolCallStream(
      await openai.chat.completions.create({
        model: 'qwen',
        messages: [{ role: 'user', content: 'Weather?' }],
        tools: [weatherTool],
        stream: true,
      }),
    );
    assert.deepEqual(streamed, {
      content: 'Checking.\n',
      calls: [['get_weather', { city: 'Paris' }]],
      finish: 'tool_calls',
    });
  } finally {
    await server.close();
  }
});
