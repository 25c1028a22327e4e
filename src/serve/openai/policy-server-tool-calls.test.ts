/** serve-policy's tool calls over the real HTTP path, with a scripted generation hook: the openai client and the Vercel AI SDK. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
import { at } from '../../core/indexing.ts';
import { byteTokenizer } from '../../chat/tokenizer.ts';
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
const toolCallReply = '<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>';

/** A server whose generate hook replies `toolCallReply` token by token, as the built-in model's generate would; it keeps the prompts it got. */
interface ScriptedServing {
  server: PolicyServer;
  openai: OpenAI;
  prompts: string[];
}

/** Serves the scripted tool-call reply for the tests of one describe: started before them, closed after. */
function serveScriptedToolCallsDuringSuite(): ScriptedServing {
  const serving = { prompts: [] as string[] } as ScriptedServing;
  const scripted = streamingScriptedPolicy({
    reply: [toolCallReply],
    contextWindow: 4096,
    logprob: -0.25,
    onRequest: (request) => serving.prompts.push(byteTokenizer.decode(request.prompt)),
  });
  before(async () => {
    serving.server = await startPolicyServer({
      policy: scripted,
      modelName: 'scripted',
      port: 0,
      batchWindowMs: 1,
    });
    serving.openai = new OpenAI({ baseURL: `${serving.server.url}/v1`, apiKey: 'unused' });
  });
  after(() => serving.server.close());
  return serving;
}

describe('serve-policy tool calls (scripted generation hook, real HTTP path): the openai client', () => {
  const serving = serveScriptedToolCallsDuringSuite();

  test('openai client: the tools reach the prompt; the reply becomes tool_calls (plain and streamed)', async () => {
    const { openai, prompts } = serving;
    const completion = await openai.chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
    });
    assert.match(at(prompts, prompts.length - 1, 'prompts'), /<tools>\n\{"name":"get_weather"/);
    const choice = at(completion.choices, 0, 'choices');
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const call = at(choice.message.tool_calls ?? [], 0, 'tool calls');
    assert.equal(call.type, 'function');
    assert.deepEqual(call.type === 'function' ? [call.function.name, JSON.parse(call.function.arguments)] : [], [
      'get_weather',
      { city: 'Paris' },
    ]);

    const streamed = await readToolCallStream(
      await openai.chat.completions.create({
        model: 'scripted',
        messages: [{ role: 'user', content: 'Weather?' }],
        tools: [weatherTool],
        stream: true,
      }),
    );
    assert.equal(streamed.content, '', 'the tool-call block is not streamed as content');
    assert.deepEqual(streamed.calls, [['get_weather', { city: 'Paris' }]]);
    assert.equal(streamed.finish, 'tool_calls');

    const none = await openai.chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: 'x' }],
      tools: [weatherTool],
      tool_choice: 'none',
    });
    assert.equal(
      at(none.choices, 0, 'choices').message.content,
      toolCallReply,
      "tool_choice 'none': the text stays content",
    );
  });

  test('a tool result in the conversation is rendered as a tool message', async () => {
    const { openai, prompts } = serving;
    await openai.chat.completions.create({
      model: 'scripted',
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
      tools: [weatherTool],
    });
    assert.match(
      at(prompts, prompts.length - 1, 'prompts'),
      /<\|assistant\|><tool_call>\{"name":"get_weather","arguments":\{"city":"Paris"\}\}<\/tool_call><\|end\|><\|tool\|>sunny<\|end\|><\|assistant\|>$/,
    );
  });
});

describe('serve-policy tool calls (scripted generation hook, real HTTP path): the AI SDK and odd schemas', () => {
  const serving = serveScriptedToolCallsDuringSuite();

  test('Vercel AI SDK: generateText and streamText report the tool call', async () => {
    const { server } = serving;
    const provider = createOpenAICompatible({ name: 'agentrl', baseURL: `${server.url}/v1` });
    const tools = {
      get_weather: tool({ description: 'weather of a city', inputSchema: z.object({ city: z.string() }) }),
    };
    const generated = await generateText({ model: provider('scripted'), prompt: 'Weather in Paris?', tools });
    assert.deepEqual(
      generated.toolCalls.map((call) => [call.toolName, call.input]),
      [['get_weather', { city: 'Paris' }]],
    );
    assert.equal(generated.finishReason, 'tool-calls');
    const streamed = streamText({
      model: provider('scripted'),
      prompt: 'Weather?',
      tools: { get_weather: tool({ inputSchema: jsonSchema<{ city: string }>(weatherTool.function.parameters) }) },
    });
    const parts: string[] = [];
    for await (const part of streamed.fullStream)
      if (part.type === 'tool-call') parts.push(`${part.toolName} ${JSON.stringify(part.input)}`);
    assert.deepEqual(parts, ['get_weather {"city":"Paris"}']);
  });

  test('tool parameters with keys such as constructor and __proto__ are ordinary JSON Schema keys', async () => {
    const { server, prompts } = serving;
    const parameters =
      '{"type":"object","properties":{"constructor":{"type":"string"},"__proto__":{"type":"number"}},"constructor":null}';
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"model":"scripted","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"odd","parameters":${parameters}}}]}`,
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.ok(
      at(prompts, prompts.length - 1, 'prompts').includes(`"parameters":${parameters}`),
      'the schema reaches the prompt unchanged',
    );
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });
});
