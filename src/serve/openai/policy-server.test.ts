import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
import { renderGenerationPrompt } from '../../chat/chat-template.ts';
import { saveCheckpoint } from '../../model/checkpoint.ts';
import { generate } from '../../model/generate.ts';
import { TransformerModel } from '../../model/model.ts';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import type { TokenGenerator } from './batcher.ts';
import { loadServedPolicy, startPolicyServer, type PolicyServer } from './policy-server.ts';

const tiny = { vocabSize: 272, hiddenSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 2, intermediateSize: 64, maxSeqLen: 128 };
const end = byteTokenizer.specialTokens.end;

describe('serve-policy with a tiny random built-in model (real checkpoint, real HTTP)', () => {
  let dir: string;
  let server: PolicyServer;
  let model: TransformerModel;
  let openai: OpenAI;
  const batches: number[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentrl-serve-'));
    const created = await TransformerModel.create(tiny, { seed: 7 });
    await saveCheckpoint(join(dir, 'ckpt'), { config: created.config, params: await created.hostParams() });
    const served = await loadServedPolicy(join(dir, 'ckpt'));
    model = served.model;
    server = await startPolicyServer({ ...served, modelName: 'tiny', port: 0, batchWindowMs: 30, onBatch: (rows) => batches.push(rows) });
    openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused' });
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** What the model itself generates for these messages (one row, as the server runs a lone request). */
  async function direct(content: string, options: { temperature: number; seed: number; maxNewTokens: number }) {
    const prompt = renderGenerationPrompt([{ role: 'user', content }]).tokens;
    const [row] = await generate(model, [prompt], { ...options, stopTokens: [end], decode: (ids) => byteTokenizer.decode(ids), maxTokenId: byteTokenizer.vocabSize });
    return { row: row!, text: byteTokenizer.decode(row!.tokens, { skipSpecialTokens: true }), prompt };
  }

  test('openai client: chat completion, logprobs and usage equal the model’s own generation', async () => {
    const expected = await direct('hello', { temperature: 0.8, seed: 11, maxNewTokens: 20 });
    const completion = await openai.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hello' }], temperature: 0.8, seed: 11, max_tokens: 20, logprobs: true });
    const choice = completion.choices[0]!;
    assert.equal(choice.message.content, expected.text);
    assert.equal(choice.finish_reason, expected.row.finishReason);
    const sampled = expected.row.tokens.filter((id) => id !== end).length;
    assert.equal(choice.logprobs!.content!.length, sampled);
    choice.logprobs!.content!.forEach((entry, i) => assert.ok(Math.abs(entry.logprob - expected.row.logprobs[i]!) < 1e-6));
    assert.deepEqual(completion.usage, { prompt_tokens: expected.prompt.length, completion_tokens: expected.row.tokens.length, total_tokens: expected.prompt.length + expected.row.tokens.length });
    const models = await openai.models.list();
    assert.deepEqual(models.data.map((entry) => entry.id), ['tiny']);
  });

  test('openai client: streamed chunks add up to the same text; usage arrives last', async () => {
    const expected = await direct('stream me', { temperature: 1, seed: 3, maxNewTokens: 24 });
    const stream = await openai.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'stream me' }],
      seed: 3,
      max_tokens: 24,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let contentChunks = 0;
    let finish: string | null = null;
    let usage: unknown = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        if (choice.delta.content) {
          text += choice.delta.content;
          contentChunks++;
        }
        finish = choice.finish_reason ?? finish;
      }
    }
    assert.equal(text, expected.text);
    assert.ok(contentChunks >= Math.min(3, expected.text.length), `${contentChunks} content chunks`);
    assert.equal(finish, expected.row.finishReason);
    assert.deepEqual(usage, { prompt_tokens: expected.prompt.length, completion_tokens: expected.row.tokens.length, total_tokens: expected.prompt.length + expected.row.tokens.length });
  });

  test('openai client: completions (text, echo, logprobs 0, stream)', async () => {
    const completion = await openai.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 8, temperature: 0, logprobs: 0, echo: true });
    const choice = completion.choices[0]!;
    assert.ok(choice.text.startsWith('abc'));
    assert.equal(choice.logprobs!.token_logprobs!.length, choice.logprobs!.tokens!.length);
    assert.equal(choice.logprobs!.text_offset![0], 3, 'offsets count the echoed prompt');
    const stream = await openai.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 8, temperature: 0, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    assert.equal('abc' + text, choice.text, 'greedy: the stream gives the same text');
  });

  test('concurrent requests with the same options run as one batch; different max_tokens are cut per row', async () => {
    batches.length = 0;
    const results = await Promise.all(
      [4, 9, 13, 6].map((maxTokens, i) => openai.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: `q${i}` }], max_tokens: maxTokens, temperature: 1 })),
    );
    assert.deepEqual(batches, [4], 'one generate call for the four requests');
    results.forEach((result, i) => assert.ok(result.usage!.completion_tokens <= [4, 9, 13, 6][i]!));
  });

  test('Vercel AI SDK: generateText and streamText get the model’s text', async () => {
    const provider = createOpenAICompatible({ name: 'agentrl', baseURL: `${server.url}/v1` });
    const expected = await direct('hi there', { temperature: 0.5, seed: 9, maxNewTokens: 16 });
    const generated = await generateText({ model: provider('tiny'), prompt: 'hi there', temperature: 0.5, seed: 9, maxOutputTokens: 16 });
    assert.equal(generated.text, expected.text);
    const streamed = streamText({ model: provider('tiny'), prompt: 'hi there', temperature: 0.5, seed: 9, maxOutputTokens: 16 });
    let text = '';
    for await (const part of streamed.textStream) text += part;
    assert.equal(text, expected.text);
  });

  test('errors come back in OpenAI’s shape: bad field, unsupported option, unknown model, malformed JSON', async () => {
    await assert.rejects(openai.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'x' }], temperature: 5 }), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 400 && /temperature/.test(error.message));
    await assert.rejects(openai.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'x' }], logprobs: true, top_logprobs: 3 }), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 400);
    await assert.rejects(openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 404 && error.code === 'model_not_found');
    const response = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: '{"model": ' });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { type: string } }).error.type, 'invalid_request_error');
  });
});

describe('serve-policy tool calls (scripted generation hook, real HTTP path)', () => {
  const reply = '<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>';
  const prompts: string[] = [];
  /** Replies with `reply` token by token, as the built-in model's generate would. */
  const scripted: TokenGenerator = async (batch, options) =>
    batch.map((prompt, row) => {
      prompts.push(byteTokenizer.decode(prompt));
      const tokens = [...byteTokenizer.encode(reply), end].slice(0, options.maxNewTokens);
      tokens.forEach((token) => options.onToken(row, token, -0.25));
      return { tokens, logprobs: tokens.map(() => -0.25), text: reply, finishReason: tokens.at(-1) === end ? 'stop' : 'length' };
    });
  let server: PolicyServer;
  let openai: OpenAI;
  const weatherTool = { type: 'function' as const, function: { name: 'get_weather', description: 'weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
  before(async () => {
    server = await startPolicyServer({ generate: scripted, tokenizer: byteTokenizer, contextWindow: 4096, modelName: 'scripted', port: 0, batchWindowMs: 1 });
    openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused' });
  });
  after(() => server.close());

  test('openai client: the tools reach the prompt; the reply becomes tool_calls (plain and streamed)', async () => {
    const completion = await openai.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool] });
    assert.match(prompts.at(-1)!, /<tools>\n\{"name":"get_weather"/);
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const call = choice.message.tool_calls![0]!;
    assert.equal(call.type, 'function');
    assert.deepEqual(call.type === 'function' ? [call.function.name, JSON.parse(call.function.arguments)] : [], ['get_weather', { city: 'Paris' }]);

    const stream = await openai.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool], stream: true });
    const calls: { name?: string; arguments: string }[] = [];
    let content = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      content += delta?.content ?? '';
      for (const part of delta?.tool_calls ?? []) {
        calls[part.index] ??= { arguments: '' };
        calls[part.index]!.name ??= part.function?.name;
        calls[part.index]!.arguments += part.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(content, '', 'the tool-call block is not streamed as content');
    assert.deepEqual(calls.map((c) => [c.name, JSON.parse(c.arguments)]), [['get_weather', { city: 'Paris' }]]);
    assert.equal(finish, 'tool_calls');

    const none = await openai.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'x' }], tools: [weatherTool], tool_choice: 'none' });
    assert.equal(none.choices[0]!.message.content, reply, "tool_choice 'none': the text stays content");
  });

  test('Vercel AI SDK: generateText and streamText report the tool call', async () => {
    const provider = createOpenAICompatible({ name: 'agentrl', baseURL: `${server.url}/v1` });
    const tools = { get_weather: tool({ description: 'weather of a city', inputSchema: z.object({ city: z.string() }) }) };
    const generated = await generateText({ model: provider('scripted'), prompt: 'Weather in Paris?', tools });
    assert.deepEqual(generated.toolCalls.map((call) => [call.toolName, call.input]), [['get_weather', { city: 'Paris' }]]);
    assert.equal(generated.finishReason, 'tool-calls');
    const streamed = streamText({ model: provider('scripted'), prompt: 'Weather?', tools: { get_weather: tool({ inputSchema: jsonSchema<{ city: string }>(weatherTool.function.parameters) }) } });
    const parts: string[] = [];
    for await (const part of streamed.fullStream) if (part.type === 'tool-call') parts.push(`${part.toolName} ${JSON.stringify(part.input)}`);
    assert.deepEqual(parts, ['get_weather {"city":"Paris"}']);
  });

  test('tool parameters with keys such as constructor and __proto__ are ordinary JSON Schema keys', async () => {
    const parameters = '{"type":"object","properties":{"constructor":{"type":"string"},"__proto__":{"type":"number"}},"constructor":null}';
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"model":"scripted","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"odd","parameters":${parameters}}}]}`,
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.ok(prompts.at(-1)!.includes(`"parameters":${parameters}`), 'the schema reaches the prompt unchanged');
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });

  test('a tool result in the conversation is rendered as a tool message', async () => {
    await openai.chat.completions.create({
      model: 'scripted',
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
      tools: [weatherTool],
    });
    assert.match(prompts.at(-1)!, /<\|assistant\|><tool_call>\{"name":"get_weather","arguments":\{"city":"Paris"\}\}<\/tool_call><\|end\|><\|tool\|>sunny<\|end\|><\|assistant\|>$/);
  });
});
