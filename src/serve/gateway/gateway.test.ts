/**
 * The training gateway over real HTTP with real clients (the `openai` SDK, fetch): session ids,
 * what is recorded per call, prefix joining, tools, rewards, timeouts, OpenAI-shaped errors, a
 * client leaving mid-stream, and many concurrent sessions. The sampler is a `ScriptedPolicy`
 * (deterministic replies) wrapped to see what the gateway asked of it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { at } from '../../core/indexing.ts';
import type { Message } from '../../core/types.ts';
import { renderGenerationPrompt } from '../../chat/chat-template.ts';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import { lastUser, sampler } from './scripted-sampler-fixture.ts';
import { startGateway, type Gateway } from './gateway.ts';
import { withToolsPrompt } from '../openai/tool-format.ts';

const end = byteTokenizer.specialTokens.end;

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

function assertOpenAiError(answer: { status: number; json: any }, status: number, code?: string): void {
  assert.equal(answer.status, status, JSON.stringify(answer.json));
  assert.deepEqual(Object.keys(answer.json.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(typeof answer.json.error.message, 'string');
  if (code !== undefined) assert.equal(answer.json.error.code, code);
}

/** A gateway over a sampler that echoes the last user message, for the tests of one describe: started before them, closed after. */
function echoGatewayDuringSuite(): { gateway: Gateway } {
  const suite = {} as { gateway: Gateway };
  before(async () => {
    suite.gateway = await startGateway({ sampler: sampler((context) => `echo ${lastUser(context)}`) });
  });
  after(async () => {
    await suite.gateway.close();
  });
  return suite;
}

describe('training gateway (real HTTP, scripted sampler): sessions', () => {
  const suite = echoGatewayDuringSuite();

  test('the session comes from the x-session-id header, the model name agentrl/<id> or the user field', async () => {
    const { gateway } = suite;
    const viaHeader = new OpenAI({
      baseURL: gateway.baseURL,
      apiKey: 'unused',
      defaultHeaders: { 'x-session-id': 'by-header' },
    });
    const plain = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'unused' });
    await viaHeader.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a' }] });
    await plain.chat.completions.create({ model: 'agentrl/by-model', messages: [{ role: 'user', content: 'b' }] });
    await plain.chat.completions.create({
      model: 'gpt-4o-mini',
      user: 'by-user',
      messages: [{ role: 'user', content: 'c' }],
    });
    for (const [id, content] of [
      ['by-header', 'a'],
      ['by-model', 'b'],
      ['by-user', 'c'],
    ] as const) {
      const finished = gateway.finishSession(id)!;
      assert.equal(finished.calls.length, 1, id);
      assert.equal(at(at(finished.calls, 0, 'calls').messages, 0, 'messages').content, content);
    }
    const missing = await post(`${gateway.baseURL}/chat/completions`, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
    });
    assertOpenAiError(missing, 400, 'missing_session_id');
    assert.match(missing.json.error.message, /x-session-id/);
  });
});

describe('training gateway (real HTTP, scripted sampler): what a call records', () => {
  const suite = echoGatewayDuringSuite();

  test('each call records the exact prompt ids, the sampled ids and their log-probs (plain and streamed)', async () => {
    const { gateway } = suite;
    const client = new OpenAI({
      baseURL: gateway.baseURL,
      apiKey: 'unused',
      defaultHeaders: { 'x-session-id': 'exact' },
    });
    const messages: Message[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ];
    const first = await client.chat.completions.create({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });
    const reply = at(first.choices, 0, 'choices').message.content!;
    assert.equal(reply, 'echo hi');
    const stream = await client.chat.completions.create({
      model: 'm',
      stream: true,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: reply },
        { role: 'user', content: 'again' },
      ],
    });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
    assert.equal(streamed, 'echo again');
    const finished = gateway.finishSession('exact')!;
    const one = at(finished.calls, 0, 'calls');
    const two = at(finished.calls, 1, 'calls');
    assert.deepEqual(one.prompt, renderGenerationPrompt(messages).tokens);
    assert.deepEqual(one.tokens, [...byteTokenizer.encode('echo hi'), end]);
    assert.deepEqual(
      one.logprobs,
      one.tokens.map(() => -0.25),
    );
    assert.deepEqual(
      two.prompt,
      renderGenerationPrompt([...messages, { role: 'assistant', content: reply }, { role: 'user', content: 'again' }])
        .tokens,
    );
    assert.deepEqual(two.tokens, [...byteTokenizer.encode('echo again'), end]);
    assert.deepEqual(finished.messages.at(-1), { role: 'assistant', content: 'echo again' });
    assert.equal(
      two.prompt.slice(0, one.prompt.length + one.tokens.length).join(),
      [...one.prompt, ...one.tokens].join(),
      'the second prompt extends the first call',
    );
  });
});

describe('training gateway (real HTTP, scripted sampler): prefix breaks', () => {
  const suite = echoGatewayDuringSuite();

  test('a client that rewrites history breaks the prefix; the break is counted', async () => {
    const { gateway } = suite;
    const client = new OpenAI({
      baseURL: gateway.baseURL,
      apiKey: 'unused',
      defaultHeaders: { 'x-session-id': 'rewrite' },
    });
    const before = gateway.metrics().prefixBreaks;
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'one' }] });
    await client.chat.completions.create({
      model: 'm',
      messages: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'echo one (edited)' },
        { role: 'user', content: 'two' },
      ],
    });
    const summary = (await (await fetch(`${gateway.baseURL}/sessions/rewrite`)).json()) as {
      calls: number;
      prefixBreaks: number;
    };
    assert.deepEqual({ calls: summary.calls, prefixBreaks: summary.prefixBreaks }, { calls: 2, prefixBreaks: 1 });
    gateway.finishSession('rewrite');
    assert.equal(gateway.metrics().prefixBreaks, before + 1);
  });
});

describe('training gateway (real HTTP, scripted sampler): errors and tools', () => {
  const suite = echoGatewayDuringSuite();

  test('malformed requests get OpenAI-shaped errors and record nothing', async () => {
    const { gateway } = suite;
    const url = `${gateway.baseURL}/chat/completions`;
    const session = { 'x-session-id': 'malformed' };
    assertOpenAiError(await post(url, '{not json', session), 400);
    assertOpenAiError(await post(url, { model: 'm' }, session), 400);
    assertOpenAiError(await post(url, { model: 'm', messages: [{ role: 'user', content: 'x' }], n: 2 }, session), 400);
    assertOpenAiError(
      await post(
        url,
        {
          model: 'm',
          messages: [
            {
              role: 'assistant',
              content: '',
              tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }],
            },
          ],
        },
        session,
      ),
      400,
    );
    assertOpenAiError(
      await post(url, { model: `agentrl/${'x'.repeat(300)}`, messages: [{ role: 'user', content: 'x' }] }),
      400,
    );
    assertOpenAiError(await post(`${gateway.baseURL}/sessions/nobody/reward`, { reward: 1 }), 404, 'session_not_found');
    assertOpenAiError(await post(`${gateway.baseURL}/completions`, { model: 'm', prompt: 'x' }), 404);
    assert.equal(gateway.finishSession('malformed'), undefined, 'no session was opened');
  });

  test('tool calls come back in OpenAI form and the tool result continues the same token stream', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'add',
          description: 'Adds.',
          parameters: { type: 'object', properties: { a: { type: 'number' } } },
        },
      },
    ];
    const toolGateway = await startGateway({
      sampler: sampler((context) =>
        context.messages.at(-1)!.role === 'tool' ? 'done' : '<tool_call>{"name":"add","arguments":{"a":1}}</tool_call>',
      ),
    });
    try {
      const client = new OpenAI({
        baseURL: toolGateway.baseURL,
        apiKey: 'unused',
        defaultHeaders: { 'x-session-id': 'tools' },
      });
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'add one' }];
      const first = await client.chat.completions.create({ model: 'm', messages, tools });
      const choice = at(first.choices, 0, 'choices');
      const call = at(choice.message.tool_calls ?? [], 0, 'tool calls') as OpenAI.ChatCompletionMessageFunctionToolCall;
      assert.equal(choice.finish_reason, 'tool_calls');
      assert.deepEqual([call.function.name, JSON.parse(call.function.arguments)], ['add', { a: 1 }]);
      messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: '1' });
      const second = await client.chat.completions.create({ model: 'm', messages, tools });
      assert.equal(at(second.choices, 0, 'choices').message.content, 'done');
      const finished = toolGateway.finishSession('tools')!;
      assert.deepEqual(
        at(finished.calls, 0, 'calls').prompt,
        renderGenerationPrompt(withToolsPrompt([{ role: 'user', content: 'add one' }], tools as never)).tokens,
      );
      assert.equal(toolGateway.metrics().prefixBreaks, 0, 'the re-rendered tool call is the sampled ids');
    } finally {
      await toolGateway.close();
    }
  });
});

describe('training gateway (real HTTP, scripted sampler): posted rewards', () => {
  const suite = echoGatewayDuringSuite();

  test('a reward posted to /v1/sessions/{id}/reward scores a client-opened session', async () => {
    const { gateway } = suite;
    const client = new OpenAI({
      baseURL: gateway.baseURL,
      apiKey: 'unused',
      defaultHeaders: { 'x-session-id': 'posted' },
    });
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'z' }] });
    assertOpenAiError(await post(`${gateway.baseURL}/sessions/posted/reward`, { reward: 'high' }), 400);
    const answer = await post(`${gateway.baseURL}/sessions/posted/reward`, { reward: 0.5 });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json.reward, { reward: 0.5, success: true });
    const taken = gateway.takeRewardedSessions();
    assert.deepEqual(
      taken.map((session) => [session.id, session.reward?.reward, session.calls.length]),
      [['posted', 0.5, 1]],
    );
    assertOpenAiError(
      await post(
        `${gateway.baseURL}/chat/completions`,
        { model: 'm', messages: [{ role: 'user', content: 'late' }] },
        { 'x-session-id': 'posted' },
      ),
      409,
      'session_ended',
    );
  });
});

describe('training gateway (real HTTP, scripted sampler): concurrent sessions', () => {
  const suite = echoGatewayDuringSuite();

  test('64 concurrent sessions of 3 calls each never mix', async () => {
    const { gateway } = suite;
    const sessions = Array.from({ length: 64 }, (_, i) => `s${i}`);
    await Promise.all(
      sessions.map(async (id) => {
        const client = new OpenAI({
          baseURL: gateway.baseURL,
          apiKey: 'unused',
          defaultHeaders: { 'x-session-id': id },
        });
        const messages: OpenAI.ChatCompletionMessageParam[] = [];
        for (let turn = 0; turn < 3; turn++) {
          messages.push({ role: 'user', content: `${id}/${turn}` });
          const completion = await client.chat.completions.create({ model: 'm', messages });
          const { content } = at(completion.choices, 0, 'choices').message;
          assert.equal(content, `echo ${id}/${turn}`);
          messages.push({ role: 'assistant', content });
        }
      }),
    );
    const breaks = gateway.metrics().prefixBreaks;
    for (const id of sessions) {
      const finished = gateway.finishSession(id)!;
      assert.equal(finished.calls.length, 3, id);
      const text = byteTokenizer.decode(finished.calls.at(-1)!.prompt.concat(finished.calls.at(-1)!.tokens), {
        skipSpecialTokens: true,
      });
      assert.deepEqual(
        text.match(/s\d+\/\d/g),
        [`${id}/0`, `${id}/0`, `${id}/1`, `${id}/1`, `${id}/2`, `${id}/2`],
        text,
      );
    }
    assert.equal(gateway.metrics().prefixBreaks, breaks, 'every session is one token stream');
  });
});

describe('training gateway: timeouts and clients that leave', () => {
  test('a client that disconnects mid-stream leaves no recorded call', async () => {
    const gateway = await startGateway({ sampler: sampler(() => 'slow reply', { delayMs: 300 }) });
    try {
      const controller = new AbortController();
      const response = await fetch(`${gateway.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-id': 'leaver' },
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      assert.match(first, /"role":"assistant"/, 'the stream had begun');
      controller.abort();
      await new Promise((resolve) => setTimeout(resolve, 600)); // the generation ends meanwhile
      const summary = (await (await fetch(`${gateway.baseURL}/sessions/leaver`)).json()) as { calls: number };
      assert.equal(summary.calls, 0);
      assert.equal(gateway.metrics().callsAbandoned, 1);
      assert.equal(gateway.metrics().calls, 0);
    } finally {
      await gateway.close();
    }
  });

  test('an idle session times out, is dropped and counted; a late call to it is refused', async () => {
    const gateway = await startGateway({ sampler: sampler(() => 'ok'), sessionTimeoutMs: 100 });
    try {
      const client = new OpenAI({
        baseURL: gateway.baseURL,
        apiKey: 'unused',
        defaultHeaders: { 'x-session-id': 'idle' },
        maxRetries: 0,
      });
      await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(gateway.metrics().sessionsTimedOut, 1);
      assert.equal((await fetch(`${gateway.baseURL}/sessions/idle`)).status, 404);
      await assert.rejects(
        client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
        (error: unknown) => error instanceof OpenAI.APIError && error.status === 409,
      );
    } finally {
      await gateway.close();
    }
  });
});
