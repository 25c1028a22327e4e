/**
 * Hostile requests against a real serve-policy over real HTTP (the `openai` SDK, fetch, a raw
 * node:http client): each is refused with an OpenAI-shaped 400/413 naming the limit and the value,
 * before any rendering or generation (the chat format and the generator count what they did), in
 * well under a second, with the event loop free meanwhile. The gateway shares the same bounds.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { agentrlChatFormat, type ChatFormat } from '../../chat/chat-format.ts';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import { InvalidArgumentError } from '../../core/errors.ts';
import { startGateway } from '../gateway/gateway.ts';
import { sampler } from '../gateway/scripted-sampler-fixture.ts';
import { startPolicyServer, type PolicyServer } from './policy-server.ts';
import { parseRequestLimits, type RequestLimitsInput } from './request-limits.ts';
import { streamingScriptedPolicy } from './streaming-scripted-policy-fixture.ts';

/** A served byte model whose chat format counts its renderings and whose generator counts its rows (each row says "ok"). */
interface CountingServer {
  server: PolicyServer;
  openai: OpenAI;
  renders: number;
  rows: number;
}

function serveDuringDescribe(requestLimits: RequestLimitsInput = {}): CountingServer {
  const serving = { renders: 0, rows: 0 } as CountingServer;
  const base = agentrlChatFormat(byteTokenizer);
  const chatFormat: ChatFormat = {
    ...base,
    promptTokens: (messages, options) => {
      serving.renders++;
      return base.promptTokens(messages, options);
    },
  };
  const policy = streamingScriptedPolicy({
    reply: ['ok'],
    chatFormat,
    contextWindow: 4096,
    logprob: -0.5,
    onRequest: () => serving.rows++,
  });
  before(async () => {
    serving.server = await startPolicyServer({
      policy,
      modelName: 'tiny',
      port: 0,
      batchWindowMs: 0,
      requestLimits,
    });
    serving.openai = new OpenAI({ baseURL: `${serving.server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  after(() => serving.server.close());
  return serving;
}

/** What the servers answer a refused request (OpenAI's error shape). */
interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

async function post(url: string, body: unknown): Promise<{ status: number; json: ErrorBody; ms: number }> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as ErrorBody, ms: performance.now() - started };
}

/** An OpenAI-shaped error with this status and code whose message names both numbers. */
function assertRefused(
  answer: { status: number; json: ErrorBody },
  { status, code, param, names }: { status: number; code: string | null; param: string | null; names: number[] },
): void {
  assert.equal(answer.status, status, JSON.stringify(answer.json).slice(0, 300));
  assert.deepEqual(Object.keys(answer.json.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(answer.json.error.type, 'invalid_request_error');
  assert.equal(answer.json.error.code, code);
  assert.equal(answer.json.error.param, param);
  for (const value of names) assert.match(answer.json.error.message, new RegExp(`\\b${value}\\b`));
  assert.doesNotMatch(answer.json.error.message, /call stack/);
}

const user = (content: string) => [{ role: 'user', content }];
const tools = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    type: 'function' as const,
    function: {
      name: `tool${i}`,
      description: 'd',
      parameters: { type: 'object', properties: { x: { type: 'string' } } },
    },
  }));

describe("serve-policy with its default limits: the issue's attacks", () => {
  const serving = serveDuringDescribe();
  const chat = () => `${serving.server.url}/v1/chat/completions`;

  test('a 7.5 MB message is 413 at once, and the server answers another request meanwhile', async () => {
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const huge = post(chat(), { model: 'tiny', messages: user('a'.repeat(7_500_000)) });
    const health = await fetch(`${serving.server.url}/health`);
    assert.equal(health.status, 200);
    const answer = await huge;
    delay.disable();
    assertRefused(answer, { status: 413, code: null, param: null, names: [4 * 1024 * 1024] });
    assert.ok(answer.ms < 1000, `answered in ${answer.ms} ms`);
    assert.ok(delay.max / 1e6 < 250, `the event loop stalled ${delay.max / 1e6} ms`);
    assert.equal(serving.renders, 0);
  });

  test('10,000 tools (openai SDK): 400 naming the limit, nothing rendered', async () => {
    const refused = await serving.openai.chat.completions
      .create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], tools: tools(10_000) })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    assert.ok(refused instanceof OpenAI.BadRequestError, String(refused));
    assert.equal(refused.code, 'request_too_large');
    assert.equal(refused.param, 'tools');
    assert.match(refused.message, /10000.*128/);
    assert.equal(serving.renders, 0);
  });

  test('4,000 prompts × n = 16 on /v1/completions: 400 before any row is generated', async () => {
    const prompt = Array.from({ length: 4000 }, () => 'hi');
    const answer = await post(`${serving.server.url}/v1/completions`, { model: 'tiny', prompt, n: 16, max_tokens: 1 });
    assertRefused(answer, { status: 400, code: 'request_too_large', param: 'prompt', names: [64000, 128] });
    assert.equal(serving.rows, 0);
  });
});

describe('serve-policy with its default limits: the context and the body size', () => {
  const serving = serveDuringDescribe();
  const chat = () => `${serving.server.url}/v1/chat/completions`;

  test('a message over the context by its characters alone is refused before it is rendered', async () => {
    const answer = await post(chat(), { model: 'tiny', messages: user('b'.repeat(500_000)) });
    assertRefused(answer, { status: 400, code: 'context_length_exceeded', param: 'messages', names: [500000, 4096] });
    // 4,094 characters might fit; rendered (bos, role header, end, generation prompt) they are 4,098 tokens.
    const rendered = await post(chat(), { model: 'tiny', messages: user('b'.repeat(4094)) });
    assertRefused(rendered, { status: 400, code: 'context_length_exceeded', param: 'messages', names: [4098, 4096] });
    assert.equal(serving.renders, 1, 'only the prompt that might fit was rendered (and then counted exactly)');
  });

  test('max_tokens the window cannot hold, and a completion prompt of ids over it: 400', async () => {
    const overBudget = await post(chat(), { model: 'tiny', messages: user('hi'), max_tokens: 5000 });
    assertRefused(overBudget, {
      status: 400,
      code: 'context_length_exceeded',
      param: 'max_completion_tokens',
      names: [5000, 4096],
    });
    const absurd = await post(chat(), { model: 'tiny', messages: user('hi'), max_tokens: 1e308 });
    assert.equal(absurd.status, 400); // not a safe integer: the schema refuses it
    const ids = Array.from({ length: 5000 }, () => 97);
    const longIds = await post(`${serving.server.url}/v1/completions`, { model: 'tiny', prompt: ids });
    assertRefused(longIds, { status: 400, code: 'context_length_exceeded', param: 'prompt', names: [5000, 4096] });
  });

  test('a body that says it is 100 MB is 413 before the client has sent it', async () => {
    const url = new URL(chat());
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(100 * 1024 * 1024) },
      });
      request.on('response', (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
        request.destroy();
      });
      request.on('error', reject);
      request.write('{"model": "tiny", "messages": [');
    });
    assert.equal(status, 413);
  });

  test('a request within the limits is still answered', async () => {
    const reply = await serving.openai.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'hi' }],
      tools: tools(3),
      n: 2,
    });
    assert.deepEqual(
      reply.choices.map((choice) => choice.message.content),
      ['ok', 'ok'],
    );
  });
});

describe('serve-policy against hostile tool schemas', () => {
  const serving = serveDuringDescribe();
  const chat = () => `${serving.server.url}/v1/chat/completions`;

  test('malformed tool schemas: 400 naming the field, nothing rendered or generated', async () => {
    const [renders, rows] = [serving.renders, serving.rows];
    const bodies: [unknown, number][] = [
      [[{ type: 'function', function: { name: 'f', parameters: 'not an object' } }], 400],
      [[{ type: 'function', function: { parameters: {} } }], 400],
      [[{ type: 'retrieval' }], 400],
      [{ type: 'function', function: { name: 'f' } }, 400],
    ];
    for (const [toolList, status] of bodies) {
      const answer = await post(chat(), { model: 'tiny', messages: user('hi'), tools: toolList });
      assert.equal(answer.status, status, JSON.stringify(answer.json).slice(0, 200));
      assert.equal(answer.json.error.type, 'invalid_request_error');
      assert.match(answer.json.error.param ?? '', /^tools/);
      assert.doesNotMatch(answer.json.error.message, /call stack/);
    }
    assert.equal(serving.renders, renders);
    assert.equal(serving.rows, rows);
  });

  test('deeply nested tool schemas: 60 levels answered, 1,500 levels (55 kB) refused by the context, never a crash', async () => {
    const nestedTool = (depth: number) => {
      const parameters = `${'{"type":"object","properties":{"x":'.repeat(depth)}{"type":"string"}${'}}'.repeat(depth)}`;
      return `{"model":"tiny","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${parameters}}}]}`;
    };
    const send = (body: string) =>
      fetch(chat(), { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const shallow = await send(nestedTool(60));
    const answer = (await shallow.json()) as { choices?: { message: { content: string } }[] };
    assert.equal(shallow.status, 200, JSON.stringify(answer).slice(0, 200));
    assert.equal(answer.choices?.[0]?.message.content, 'ok');
    const deep = await send(nestedTool(1500));
    assert.equal(deep.status, 400);
    assert.equal(((await deep.json()) as ErrorBody).error.code, 'context_length_exceeded');
    assert.equal((await fetch(`${serving.server.url}/health`)).status, 200);
  });
});

describe('serve-policy with tight limits', () => {
  const serving = serveDuringDescribe({
    maxMessages: 3,
    maxMessageChars: 100,
    maxToolChars: 200,
    maxChoices: 4,
    maxStopChars: 8,
    maxPromptChars: 250,
    maxCompletionTokens: 64,
  });
  const chat = () => `${serving.server.url}/v1/chat/completions`;
  const cases: [string, Record<string, unknown>, { param: string; names: number[] }][] = [
    [
      '4 messages',
      { messages: [...user('a'), ...user('b'), ...user('c'), ...user('d')] },
      { param: 'messages', names: [4, 3] },
    ],
    ['a 101-character message', { messages: user('x'.repeat(101)) }, { param: 'messages[0]', names: [101, 100] }],
    [
      'a 201-character tool',
      { messages: user('x'), tools: [{ type: 'function', function: { name: 'f', description: 'd'.repeat(200) } }] },
      { param: 'tools[0]', names: [229, 200] },
    ],
    [
      'three 90-character messages',
      { messages: [...user('a'.repeat(90)), ...user('b'.repeat(90)), ...user('c'.repeat(90))] },
      { param: 'messages', names: [270, 250] },
    ],
    ['n = 5', { messages: user('x'), n: 5 }, { param: 'n', names: [5, 4] }],
    ['a 9-character stop string', { messages: user('x'), stop: ['123456789'] }, { param: 'stop', names: [9, 8] }],
    [
      'max_tokens 65 past maxCompletionTokens 64',
      { messages: user('x'), max_tokens: 65 },
      { param: 'max_completion_tokens', names: [65, 64] },
    ],
    [
      'a long tool call in the history',
      {
        messages: [
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c', type: 'function', function: { name: 'f', arguments: JSON.stringify({ q: 'y'.repeat(120) }) } },
            ],
          },
          ...user('x'),
        ],
      },
      { param: 'messages[0]', names: [129, 100] },
    ],
  ];
  for (const [name, body, expected] of cases)
    test(`${name}: 400 naming the limit`, async () => {
      const answer = await post(chat(), { model: 'tiny', ...body });
      assertRefused(answer, { status: 400, code: 'request_too_large', ...expected });
      assert.equal(serving.renders, 0);
    });
});

test('the limits are validated: a negative or unknown one is an InvalidArgumentError naming it', () => {
  assert.equal(parseRequestLimits().maxTools, 128);
  assert.throws(
    () => parseRequestLimits({ maxTools: -1 }),
    (error: unknown) => error instanceof InvalidArgumentError && /maxTools/.test(error.message),
  );
  assert.throws(() => parseRequestLimits({ maxTool: 3 } as RequestLimitsInput), InvalidArgumentError);
});

test('the gateway holds chat requests to the same bounds', async () => {
  const gateway = await startGateway({ sampler: sampler(() => 'ok'), requestLimits: { maxTools: 2 } });
  try {
    const answer = await post(`${gateway.baseURL}/chat/completions`, {
      model: 'agentrl/s1',
      messages: user('hi'),
      tools: tools(3),
    });
    assertRefused(answer, { status: 400, code: 'request_too_large', param: 'tools', names: [3, 2] });
    const huge = await post(`${gateway.baseURL}/chat/completions`, {
      model: 'agentrl/s1',
      messages: user('a'.repeat(7_500_000)),
    });
    assert.equal(huge.status, 413);
  } finally {
    await gateway.close();
  }
});
