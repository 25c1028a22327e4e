import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { Tool } from '../core/types.ts';
import { parseAction } from '../envs/action-format.ts';
import { renderGenerationPrompt } from '../chat/chat-template.ts';
import { byteSpecialTokens, byteTokenizer } from '../chat/tokenizer.ts';
import { PolicyRequestError } from './openai-http.ts';
import { OpenAIPolicy, type OpenAIPolicyOptions } from './openai-policy.ts';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`./openai-fixtures/${name}.json`, import.meta.url), 'utf8'));
const end = byteSpecialTokens.end;

interface Reply {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Answer only after this long (a hung server). */
  delayMs?: number;
}

/** A local server replaying recorded answers in order and recording what it was sent. */
class ReplayServer {
  readonly requests: { url: string; headers: IncomingMessage['headers']; body: Record<string, unknown> }[] = [];
  private replies: Reply[] = [];
  private readonly server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      this.requests.push({
        url: request.url ?? '',
        headers: request.headers,
        body: JSON.parse(text) as Record<string, unknown>,
      });
      const reply = this.replies.shift() ?? { status: 599, body: { error: 'no reply queued' } };
      const send = (): void => {
        if (response.destroyed) return;
        response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        response.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
      };
      if (reply.delayMs === undefined) send();
      else setTimeout(send, reply.delayMs).unref();
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }
  queue(...replies: Reply[]): void {
    this.replies.push(...replies);
  }
  reset(): void {
    this.replies = [];
    this.requests.length = 0;
  }
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const calculator: Tool<{ expression: string }> = {
  name: 'calculator',
  description: 'Evaluates an arithmetic expression.',
  inputSchema: z.object({ expression: z.string().describe('e.g. 2 + 3') }),
  execute: ({ expression }) => expression,
};

const prompt = renderGenerationPrompt([
  { role: 'system', content: 'Answer in <answer> tags.' },
  { role: 'user', content: 'What is 2 + 2?' },
]).tokens;

/** A replay server for one describe block: started before its tests, emptied before each, closed after; `make` points a policy at it. */
function useReplayServer() {
  const server = new ReplayServer();
  const sleeps: number[] = [];
  const replay = {
    server,
    /** The delays the policy's retries slept, in order (a fake sleep records them). */
    sleeps,
    baseURL: '',
    make: (options: OpenAIPolicyOptions = {}): OpenAIPolicy =>
      new OpenAIPolicy({
        baseURL: replay.baseURL,
        model: 'Qwen/Qwen2.5-0.5B-Instruct',
        environment: {},
        sleep: async (ms) => void sleeps.push(ms),
        ...options,
      }),
  };
  before(async () => (replay.baseURL = await server.start()));
  after(() => server.close());
  beforeEach(() => {
    server.reset();
    sleeps.length = 0;
  });
  return replay;
}

describe('OpenAIPolicy: a recorded text or token-id answer becomes the generation; stop strings', () => {
  const replay = useReplayServer();
  test('text answer: the request carries the prompt’s messages and sampling; log-probs land on the tokens holding each server token’s first byte', async () => {
    replay.server.queue({ body: fixture('vllm-text-logprobs') });
    const generation = await replay.make().generate({ prompt, maxNewTokens: 64, temperature: 0.7, seed: 5 });
    const request = at(replay.server.requests, 0);
    assert.equal(request.url, '/v1/chat/completions');
    assert.equal(request.headers.authorization, undefined, 'no key, no authorization header');
    assert.deepEqual(request.body, {
      model: 'Qwen/Qwen2.5-0.5B-Instruct',
      messages: [
        { role: 'system', content: 'Answer in <answer> tags.' },
        { role: 'user', content: 'What is 2 + 2?' },
      ],
      max_tokens: 64,
      temperature: 0.7,
      seed: 5,
      logprobs: true,
    });
    assert.equal(generation.text, '<answer>4</answer>');
    assert.deepEqual(generation.tokens, [...byteTokenizer.encode('<answer>4</answer>'), end]);
    assert.equal(generation.finishReason, 'stop');
    // "<" "answer" ">" "4" "</" "answer" ">" start at bytes 0, 1, 7, 8, 9, 11, 17; the stop token gets 0.
    const expected = new Array<number>(generation.tokens.length).fill(0);
    const firstBytes = [
      [0, -0.0123],
      [1, -0.2041],
      [7, -0.0031],
      [8, -1.5172],
      [9, -0.0204],
      [11, -0.0011],
      [17, -0.0502],
    ] as const;
    for (const [byte, logprob] of firstBytes) expected[byte] = logprob;
    assert.deepEqual(generation.logprobs, expected);
  });

  test('vLLM token ids: return_tokens_as_token_ids is requested and the ids and their log-probs are the generation', async () => {
    replay.server.queue({ body: fixture('vllm-token-ids') });
    const generation = await replay.make({ returnTokenIds: true }).generate({ prompt, maxNewTokens: 16 });
    assert.equal(at(replay.server.requests, 0).body.return_tokens_as_token_ids, true);
    assert.deepEqual(generation.tokens, [72, 105, 33, end]);
    assert.deepEqual(generation.logprobs, [-0.3112, -0.0871, -0.9034, 0]);
    assert.equal(generation.text, 'Hi!');
  });

  test('stop strings are applied here (not sent): the text ends right after the first one; maxNewTokens cuts (length)', async () => {
    replay.server.queue({ body: fixture('text-past-stop-string') }, { body: fixture('text-past-stop-string') });
    const stopped = await replay.make().generate({ prompt, maxNewTokens: 64, stopStrings: ['</answer>'] });
    assert.equal(at(replay.server.requests, 0).body.stop, undefined);
    assert.equal(stopped.text, '<answer>Up</answer>');
    assert.equal(stopped.finishReason, 'stop');
    assert.deepEqual(stopped.tokens, byteTokenizer.encode('<answer>Up</answer>'));
    const cut = await replay.make().generate({ prompt, maxNewTokens: 5 });
    assert.equal(cut.text, '<answ');
    assert.equal(cut.finishReason, 'length');
  });

  test('vLLM stop_reason: a stop string the server dropped is put back', async () => {
    const answer = structuredClone(fixture('text-past-stop-string')) as {
      choices: { message: { content: string }; stop_reason: string }[];
    };
    at(answer.choices, 0).message.content = '<answer>Up';
    at(answer.choices, 0).stop_reason = '</answer>';
    replay.server.queue({ body: answer });
    const generation = await replay
      .make({ sendStopStrings: true })
      .generate({ prompt, maxNewTokens: 64, stopStrings: ['</answer>'] });
    assert.deepEqual(at(replay.server.requests, 0).body.stop, ['</answer>']);
    assert.equal(generation.text, '<answer>Up</answer>');
  });
});

describe('OpenAIPolicy: tools and tool calls', () => {
  const replay = useReplayServer();
  test('tools go out as JSON-schema functions; a tool call comes back parsed and as the <tool_call> text envs read', async () => {
    replay.server.queue({ body: fixture('vllm-tool-call') }, { body: fixture('vllm-tool-call') });
    const policy = replay.make({ tools: [calculator] });
    const generation = await policy.generate({ prompt, maxNewTokens: 128 });
    const body = at(replay.server.requests, 0).body;
    assert.deepEqual(body.tools, [
      {
        type: 'function',
        function: {
          name: 'calculator',
          description: 'Evaluates an arithmetic expression.',
          parameters: {
            type: 'object',
            properties: { expression: { type: 'string', description: 'e.g. 2 + 3' } },
            required: ['expression'],
          },
        },
      },
    ]);
    assert.equal(body.tool_choice, 'auto');
    assert.equal(generation.text, '<tool_call>{"name":"calculator","arguments":{"expression":"2 + 3"}}</tool_call>');
    assert.deepEqual(parseAction(generation.text), {
      kind: 'tool_call',
      thinking: null,
      call: { name: 'calculator', arguments: { expression: '2 + 3' } },
    });
    assert.ok(
      generation.logprobs.every((logprob) => logprob === 0),
      'no log-probs were sent: all 0',
    );

    const completion = await policy.chat({
      messages: [{ role: 'user', content: 'add' }],
      tools: [calculator],
      toolChoice: 'calculator',
    });
    assert.deepEqual(completion.toolCalls, [
      { id: 'chatcmpl-tool-7c1e0b9f', name: 'calculator', arguments: { expression: '2 + 3' } },
    ]);
    assert.equal(completion.finishReason, 'tool_calls');
    assert.deepEqual(completion.usage, { promptTokens: 120, completionTokens: 24 });
    assert.deepEqual(at(replay.server.requests, 1).body.tool_choice, {
      type: 'function',
      function: { name: 'calculator' },
    });
  });

  test('malformed tool-call arguments stay visible to the model as an invalid <tool_call>', async () => {
    replay.server.queue({ body: fixture('tool-call-malformed-arguments') });
    const generation = await replay.make({ tools: [calculator] }).generate({ prompt, maxNewTokens: 128 });
    assert.equal(
      generation.text,
      'Let me compute.<tool_call>{"name":"calculator","arguments":{"expression": "2 + }</tool_call>',
    );
    assert.deepEqual(parseAction(generation.text), { kind: 'invalid', reason: 'text outside tags: "Let me compute."' });
  });
});

describe('OpenAIPolicy: tool-call history', () => {
  const replay = useReplayServer();

  test('an earlier <tool_call> answered by a tool message goes out as tool_calls with matching tool_call_id', async () => {
    replay.server.queue({ body: fixture('vllm-text-logprobs') });
    const conversation = renderGenerationPrompt([
      { role: 'user', content: 'What is 2 + 3?' },
      {
        role: 'assistant',
        content: '<think>use it</think><tool_call>{"name":"calculator","arguments":{"expression":"2 + 3"}}</tool_call>',
      },
      { role: 'tool', content: '5' },
      { role: 'assistant', content: 'plain, not answered by a tool' },
      { role: 'user', content: 'ok' },
    ]).tokens;
    await replay.make().generate({ prompt: conversation, maxNewTokens: 32 });
    assert.deepEqual(at(replay.server.requests, 0).body.messages, [
      { role: 'user', content: 'What is 2 + 3?' },
      {
        role: 'assistant',
        content: '<think>use it</think>',
        tool_calls: [
          { id: 'call_1_0', type: 'function', function: { name: 'calculator', arguments: '{"expression":"2 + 3"}' } },
        ],
      },
      { role: 'tool', content: '5', tool_call_id: 'call_1_0' },
      { role: 'assistant', content: 'plain, not answered by a tool' },
      { role: 'user', content: 'ok' },
    ]);
  });
});

describe('OpenAIPolicy: retries and errors', () => {
  const replay = useReplayServer();
  test('429 then success: retried after the Retry-After delay', async () => {
    replay.server.queue(
      { status: 429, body: fixture('openai-429'), headers: { 'retry-after': '0.05' } },
      { body: fixture('vllm-text-logprobs') },
    );
    const generation = await replay.make().generate({ prompt, maxNewTokens: 64 });
    assert.equal(generation.text, '<answer>4</answer>');
    assert.equal(replay.server.requests.length, 2);
    assert.deepEqual(replay.sleeps, [50]);
  });

  test('a persistent 500: exponential backoff, then an error naming the URL, the status, the body and the attempts', async () => {
    replay.server.queue(...Array.from({ length: 3 }, () => ({ status: 500, body: fixture('vllm-500') })));
    const error = await replay
      .make({ maxRetries: 2, retryDelayMs: 10 })
      .generate({ prompt, maxNewTokens: 8 })
      .then(
        () => assert.fail('should reject'),
        (caught: unknown) => caught,
      );
    assert.ok(error instanceof PolicyRequestError);
    assert.equal(replay.server.requests.length, 3);
    assert.deepEqual(replay.sleeps, [10, 20]);
    assert.equal(error.details.status, 500);
    assert.equal(error.details.attempts, 3);
    assert.match(
      error.message,
      new RegExp(
        `POST ${replay.baseURL}/chat/completions: HTTP 500 Internal Server Error after 3 attempts: .*CUDA out of memory`,
      ),
    );
  });

  test('a 400 is not retried', async () => {
    replay.server.queue({ status: 400, body: fixture('vllm-400') });
    await assert.rejects(replay.make().generate({ prompt, maxNewTokens: 8 }), (error: unknown) => {
      assert.ok(error instanceof PolicyRequestError);
      assert.match(error.message, /HTTP 400 Bad Request after 1 attempt: .*maximum context length is 4096/);
      return true;
    });
    assert.equal(replay.server.requests.length, 1);
  });
});

describe('OpenAIPolicy: timeouts, bad bodies and closed ports', () => {
  const replay = useReplayServer();

  test('a server that does not answer in time: retried, then a timeout error', async () => {
    replay.server.queue(
      { body: fixture('vllm-text-logprobs'), delayMs: 2000 },
      { body: fixture('vllm-text-logprobs'), delayMs: 2000 },
    );
    await assert.rejects(
      replay.make({ timeoutMs: 100, maxRetries: 1, retryDelayMs: 1 }).generate({ prompt, maxNewTokens: 8 }),
      /no answer within 100 ms after 2 attempts/,
    );
    assert.equal(replay.server.requests.length, 2);
  });

  test('a malformed body is an error that says what is wrong', async () => {
    replay.server.queue(
      { body: fixture('malformed-no-choices') },
      { body: '<html><body>upstream connect error</body></html>' },
    );
    await assert.rejects(
      replay.make().generate({ prompt, maxNewTokens: 8 }),
      /the answer is not a chat completion \(choices: Too small: expected array to have >=1 items\)/,
    );
    await assert.rejects(
      replay.make().generate({ prompt, maxNewTokens: 8 }),
      /HTTP 200 but the body is not JSON: <html><body>upstream connect error/,
    );
  });

  test('a closed port: a connection error after the retries', async () => {
    const closed = new ReplayServer();
    const url = await closed.start();
    await closed.close();
    await assert.rejects(
      replay.make({ baseURL: url, maxRetries: 1, retryDelayMs: 1 }).generate({ prompt, maxNewTokens: 8 }),
      /request failed \(ECONNREFUSED\) after 2 attempts/,
    );
  });
});

describe('OpenAIPolicy: configuration', () => {
  const replay = useReplayServer();
  test('base URL, key and model come from the environment; a missing model is a clear error', async () => {
    replay.server.queue({ body: fixture('vllm-text-logprobs') });
    const policy = new OpenAIPolicy({
      environment: { OPENAI_BASE_URL: `${replay.baseURL}/`, OPENAI_API_KEY: 'sk-test', AGENTRL_MODEL: 'served-model' },
    });
    await policy.generate({ prompt, maxNewTokens: 8 });
    assert.equal(at(replay.server.requests, 0).headers.authorization, 'Bearer sk-test');
    assert.equal(at(replay.server.requests, 0).body.model, 'served-model');
    assert.throws(
      () => new OpenAIPolicy({ baseURL: replay.baseURL, environment: {} }),
      /needs a model: pass \{ model \} or set AGENTRL_MODEL/,
    );
    assert.throws(
      () => new OpenAIPolicy({ baseURL: 'localhost:8000', model: 'm', environment: {} }),
      InvalidArgumentError,
    );
    await assert.rejects(
      replay.make().generate({ prompt: byteTokenizer.encode('no template'), maxNewTokens: 8 }),
      InvalidArgumentError,
    );
  });
});
