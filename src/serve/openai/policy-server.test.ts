import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { renderGenerationPrompt } from '../../chat/chat-template.ts';
import { at } from '../../core/indexing.ts';
import { saveCheckpoint } from '../../model/checkpoint.ts';
import { generate } from '../../engine/generate.ts';
import { TransformerModel } from '../../engine/transformer-model.ts';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import type { BuiltinPolicy } from '../../policy/builtin-policy.ts';
import { startPolicyServer, type PolicyServer } from './policy-server.ts';

const tiny = {
  vocabSize: 272,
  hiddenSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 2,
  intermediateSize: 64,
  maxSeqLen: 128,
};
const end = byteTokenizer.specialTokens.end;

/** A tiny random built-in model saved as a real checkpoint and served over real HTTP; what its batches held (rows per generate call). */
interface TinyServing {
  server: PolicyServer;
  model: TransformerModel;
  openai: OpenAI;
  batches: number[];
}

/** Serves the tiny model once for the whole file: started before its first test, closed after its last. */
function serveTinyModelDuringFile(): TinyServing {
  const serving = { batches: [] as number[] } as TinyServing;
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentrl-serve-'));
    const created = await TransformerModel.create(tiny, { seed: 7 });
    await saveCheckpoint(join(dir, 'ckpt'), { config: created.config, params: await created.hostParams() });
    serving.server = await startPolicyServer({
      model: join(dir, 'ckpt'),
      modelName: 'tiny',
      port: 0,
      batchWindowMs: 30,
      onBatch: (rows) => serving.batches.push(rows),
    });
    serving.model = (serving.server.policy as BuiltinPolicy).model;
    serving.openai = new OpenAI({ baseURL: `${serving.server.url}/v1`, apiKey: 'unused' });
  });
  after(async () => {
    await serving.server.close();
    await rm(dir, { recursive: true, force: true });
  });
  return serving;
}

const tinyServing = serveTinyModelDuringFile();

/** What the model itself generates for these messages (one row, as the server runs a lone request). */
async function direct(
  model: TransformerModel,
  content: string,
  options: { temperature: number; seed: number; maxNewTokens: number },
) {
  const prompt = renderGenerationPrompt([{ role: 'user', content }]).tokens;
  const row = at(
    await generate(model, [prompt], {
      ...options,
      stopTokens: [end],
      decode: (ids) => byteTokenizer.decode(ids),
      maxTokenId: byteTokenizer.vocabSize,
    }),
    0,
    'generated rows',
  );
  return { row, text: byteTokenizer.decode(row.tokens, { skipSpecialTokens: true }), prompt };
}

describe('serve-policy with a tiny random built-in model (real checkpoint, real HTTP): the openai client chat', () => {
  test('openai client: chat completion, logprobs and usage equal the model’s own generation', async () => {
    const { model, openai } = tinyServing;
    const expected = await direct(model, 'hello', { temperature: 0.8, seed: 11, maxNewTokens: 20 });
    const completion = await openai.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'hello' }],
      temperature: 0.8,
      seed: 11,
      max_tokens: 20,
      logprobs: true,
    });
    const choice = at(completion.choices, 0, 'choices');
    assert.equal(choice.message.content, expected.text);
    assert.equal(choice.finish_reason, expected.row.finishReason);
    const sampled = expected.row.tokens.filter((id) => id !== end).length;
    assert.equal(choice.logprobs!.content!.length, sampled);
    choice.logprobs!.content!.forEach((entry, i) => {
      assert.ok(Math.abs(entry.logprob - at(expected.row.logprobs, i, 'logprobs')) < 1e-6);
    });
    assert.deepEqual(completion.usage, {
      prompt_tokens: expected.prompt.length,
      completion_tokens: expected.row.tokens.length,
      total_tokens: expected.prompt.length + expected.row.tokens.length,
    });
    const models = await openai.models.list();
    assert.deepEqual(
      models.data.map((entry) => entry.id),
      ['tiny'],
    );
  });
});

describe('serve-policy with a tiny random built-in model (real checkpoint, real HTTP): the openai client streaming', () => {
  test('openai client: streamed chunks add up to the same text; usage arrives last', async () => {
    const { model, openai } = tinyServing;
    const expected = await direct(model, 'stream me', { temperature: 1, seed: 3, maxNewTokens: 24 });
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
    assert.deepEqual(usage, {
      prompt_tokens: expected.prompt.length,
      completion_tokens: expected.row.tokens.length,
      total_tokens: expected.prompt.length + expected.row.tokens.length,
    });
  });

  test('openai client: completions (text, echo, logprobs 0, stream)', async () => {
    const { openai } = tinyServing;
    const completion = await openai.completions.create({
      model: 'tiny',
      prompt: 'abc',
      max_tokens: 8,
      temperature: 0,
      logprobs: 0,
      echo: true,
    });
    const choice = at(completion.choices, 0, 'choices');
    assert.ok(choice.text.startsWith('abc'));
    assert.equal(choice.logprobs!.token_logprobs!.length, choice.logprobs!.tokens!.length);
    assert.equal(choice.logprobs!.text_offset![0], 3, 'offsets count the echoed prompt');
    const stream = await openai.completions.create({
      model: 'tiny',
      prompt: 'abc',
      max_tokens: 8,
      temperature: 0,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    assert.equal(`abc${text}`, choice.text, 'greedy: the stream gives the same text');
  });
});

describe('serve-policy with a tiny random built-in model (real checkpoint, real HTTP): batching, the AI SDK, errors', () => {
  test('concurrent requests with the same options run as one batch; different max_tokens are cut per row', async () => {
    const { openai, batches } = tinyServing;
    batches.length = 0;
    const maxTokens = [4, 9, 13, 6];
    const results = await Promise.all(
      maxTokens.map((limit, i) =>
        openai.chat.completions.create({
          model: 'tiny',
          messages: [{ role: 'user', content: `q${i}` }],
          max_tokens: limit,
          temperature: 1,
        }),
      ),
    );
    assert.deepEqual(batches, [4], 'one generate call for the four requests');
    results.forEach((result, i) => {
      assert.ok(result.usage!.completion_tokens <= at(maxTokens, i, 'max_tokens'));
    });
  });

  test('Vercel AI SDK: generateText and streamText get the model’s text', async () => {
    const { model, server } = tinyServing;
    const provider = createOpenAICompatible({ name: 'agentrl', baseURL: `${server.url}/v1` });
    const expected = await direct(model, 'hi there', { temperature: 0.5, seed: 9, maxNewTokens: 16 });
    const generated = await generateText({
      model: provider('tiny'),
      prompt: 'hi there',
      temperature: 0.5,
      seed: 9,
      maxOutputTokens: 16,
    });
    assert.equal(generated.text, expected.text);
    const streamed = streamText({
      model: provider('tiny'),
      prompt: 'hi there',
      temperature: 0.5,
      seed: 9,
      maxOutputTokens: 16,
    });
    let text = '';
    for await (const part of streamed.textStream) text += part;
    assert.equal(text, expected.text);
  });

  test('errors come back in OpenAI’s shape: bad field, unsupported option, unknown model, malformed JSON', async () => {
    const { openai, server } = tinyServing;
    await assert.rejects(
      openai.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'x' }], temperature: 5 }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 400 && /temperature/.test(error.message),
    );
    await assert.rejects(
      openai.chat.completions.create({
        model: 'tiny',
        messages: [{ role: 'user', content: 'x' }],
        logprobs: true,
        top_logprobs: 3,
      }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 400,
    );
    await assert.rejects(
      openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 404 && error.code === 'model_not_found',
    );
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model": ',
    });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { type: string } }).error.type, 'invalid_request_error');
  });
});
