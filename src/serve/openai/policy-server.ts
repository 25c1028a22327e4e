/**
 * An OpenAI-compatible server for a trained built-in policy (`agentrl serve-policy <checkpoint>`),
 * so any OpenAI client (the `openai` SDK, the Vercel AI SDK, LangChain, curl) can use it:
 *
 *   POST /v1/chat/completions   messages → choices[].message {content, tool_calls}; stream (SSE),
 *                               n, stop, seed, max_tokens / max_completion_tokens, logprobs,
 *                               tools + tool_choice 'auto' | 'none' (tool-format.ts)
 *   POST /v1/completions        prompt (string, strings, ids) → choices[].text; stream, echo, logprobs: 0
 *   GET  /v1/models, /v1/models/{id}, /health
 *
 * Concurrent requests are batched (batcher.ts): requests arriving within `batchWindowMs` that
 * share their sampling options run as one batched generation (one forward pass per token for all
 * rows). Streaming sends each token's text as it is sampled: the generation yields to the event
 * loop between tokens (model/generate.ts), so chunks leave as they are made and `/health` and new
 * requests are answered while a batch runs (a request arriving mid-batch joins the next batch,
 * there is no continuous batching). Log-probs are those of the sampled
 * tokens under the temperature-scaled distribution (what the trainer's old log-probs are); top
 * alternatives are not computed (`top_logprobs` > 0 is a 400). `tool_choice: 'required'` or a
 * named function cannot be enforced on a free-running model and are treated like 'auto'.
 * Special tokens a model samples mid-reply are left out of the text (vLLM's default), the stop
 * token `<|end|>` included; they still count in `usage`, and `logprobs` lists every sampled id but the final stop token.
 * Completion prompts given as text get `<|bos|>` in front, as every training sequence had.
 * Errors use OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ToolCall } from '../../core/types.ts';
import { chatStopTokens, renderGenerationPrompt } from '../../model/chat-template.ts';
import { generate } from '../../model/generate.ts';
import { loadCheckpoint } from '../../model/checkpoint.ts';
import { TransformerModel } from '../../model/model.ts';
import { byteTokenizer, StreamingDecoder, type Tokenizer } from '../../model/tokenizer.ts';
import { decodeGenerated } from '../../policy/request.ts';
import { baseUrl, listen, pathOf, readJsonBody, sendJson } from '../http.ts';
import { GenerationBatcher, type BatchRow, type SharedSampling, type TokenGenerator } from './batcher.ts';
import { chatRequestSchema, completionRequestSchema, stopList, toMessages, type ChatRequest, type CompletionRequest } from './protocol.ts';
import { RequestError, respondWithError } from './openai-errors.ts';
import { OutputSplitter, withToolsPrompt, type SplitEvent } from './tool-format.ts';

export interface PolicyServerOptions {
  generate: TokenGenerator;
  tokenizer: Tokenizer;
  /** Prompt + completion tokens at most (the model's maxSeqLen). */
  contextWindow: number;
  /** The id clients pass as `model`. */
  modelName: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8001; 0 = any free port. */
  port?: number;
  /** Milliseconds the batcher waits for more requests. Default 10. */
  batchWindowMs?: number;
  /** Rows per batch at most. Default 64. */
  maxBatchSize?: number;
  onBatch?: (rows: number) => void;
}

export interface PolicyServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Loads a checkpoint folder (model/checkpoint.ts) as the server's generator and tokenizer. */
export async function loadServedPolicy(dir: string): Promise<{ generate: TokenGenerator; tokenizer: Tokenizer; contextWindow: number; model: TransformerModel }> {
  const checkpoint = await loadCheckpoint(dir);
  const model = await TransformerModel.fromParams(checkpoint.config, checkpoint.params);
  const tokenizer = checkpoint.tokenizer ?? byteTokenizer;
  return { generate: builtinGenerator(model, tokenizer), tokenizer, contextWindow: model.config.maxSeqLen, model };
}

/** The built-in model as the server's generator (spare vocabulary ids are never sampled). */
export function builtinGenerator(model: TransformerModel, tokenizer: Tokenizer): TokenGenerator {
  return (prompts, options) =>
    generate(model, prompts, { ...options, decode: (ids) => decodeGenerated(tokenizer, ids), maxTokenId: tokenizer.vocabSize });
}

/** One generated choice as it is being streamed or assembled. */
interface ChoiceState {
  index: number;
  ids: number[];
  logprobs: number[];
  text: string;
  decoder: StreamingDecoder;
  splitter: OutputSplitter;
  /** Logprob entries not yet attached to a streamed chunk. */
  pendingLogprobs: number;
  /** Tool calls streamed so far (the `index` of the next one). */
  streamedToolCalls: number;
}

/** A chat completion whose whole response reached the client (the training gateway records these). */
export interface FinishedChat {
  /** The prompt ids the model continued (the chat template, tools prompt included). */
  prompt: number[];
  choices: Array<{ tokens: number[]; logprobs: number[]; finishReason: 'stop' | 'length' | 'tool_calls'; content: string | null; toolCalls: ToolCall[] }>;
}

/** The server's request handling without a listening socket (the training gateway routes to it). */
export interface PolicyEndpoints {
  /** Answers any request of the API above. */
  handle(request: IncomingMessage, response: ServerResponse): Promise<void>;
  /** Reads a JSON body and parses it (400 naming the field when it does not fit); the model name is not checked. */
  readBody<Schema extends z.ZodType>(request: IncomingMessage, schema: Schema): Promise<z.output<Schema>>;
  /**
   * POST /v1/chat/completions on a parsed request. `onFinished` is called once the whole response
   * has been handed to the client's socket — never for a client that left before the end.
   */
  chat(request: ChatRequest, response: ServerResponse, onFinished?: (call: FinishedChat) => void): Promise<void>;
}

export async function startPolicyServer(options: PolicyServerOptions): Promise<PolicyServer> {
  const { host = '127.0.0.1', port = 8001 } = options;
  const endpoints = createPolicyEndpoints(options);
  const server = createServer((request, response) => {
    endpoints.handle(request, response).catch((error: unknown) => respondWithError(response, error));
  });
  const boundPort = await listen(server, port, host);
  return {
    url: baseUrl(host, boundPort),
    port: boundPort,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

export function createPolicyEndpoints(options: Omit<PolicyServerOptions, 'host' | 'port'>): PolicyEndpoints {
  const { tokenizer, contextWindow, modelName } = options;
  const batcher = new GenerationBatcher({
    generate: options.generate,
    windowMs: options.batchWindowMs,
    maxBatchSize: options.maxBatchSize,
    onBatch: options.onBatch,
  });
  const created = Math.floor(Date.now() / 1000);
  const stopTokens = chatStopTokens(tokenizer);
  const modelCard = { id: modelName, object: 'model', created, owned_by: 'agentrl' };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = pathOf(request);
    const method = request.method ?? 'GET';
    if (method === 'GET' && path === '/health') return sendJson(response, 200, { status: 'ok' });
    if (method === 'GET' && path === '/v1/models') return sendJson(response, 200, { object: 'list', data: [modelCard] });
    if (method === 'GET' && path.startsWith('/v1/models/')) {
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      if (id !== modelName) throw new RequestError(404, `The model '${id}' does not exist; this server serves '${modelName}'`, 'model', 'model_not_found');
      return sendJson(response, 200, modelCard);
    }
    if (method === 'POST' && path === '/v1/chat/completions') return chat(await parseBody(request, chatRequestSchema), response);
    if (method === 'POST' && path === '/v1/completions') return complete(await parseBody(request, completionRequestSchema), response);
    throw new RequestError(404, `${method} ${path} not found; endpoints: POST /v1/chat/completions, POST /v1/completions, GET /v1/models`);
  }

  async function readBody<Schema extends z.ZodType>(request: IncomingMessage, schema: Schema): Promise<z.output<Schema>> {
    const body = await readJsonBody(request);
    if (!body.ok) throw new RequestError(400, body.message);
    const parsed = schema.safeParse(body.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new RequestError(400, z.prettifyError(parsed.error), issue.path.join('.') || null);
    }
    return parsed.data;
  }

  async function parseBody<Schema extends z.ZodType>(request: IncomingMessage, schema: Schema): Promise<z.output<Schema>> {
    const parsed = await readBody(request, schema);
    const model = (parsed as { model: string }).model;
    if (model !== modelName) throw new RequestError(404, `The model '${model}' does not exist; this server serves '${modelName}'`, 'model', 'model_not_found');
    return parsed;
  }

  /** Checks the prompt against the window; returns the completion budget. */
  function budget(prompt: readonly number[], requested: number | null | undefined): number {
    for (const id of prompt) {
      if (id >= tokenizer.vocabSize) throw new RequestError(400, `prompt token id ${id} is outside the vocabulary [0, ${tokenizer.vocabSize})`, 'prompt');
    }
    const room = contextWindow - prompt.length;
    if (room < 1) {
      throw new RequestError(400, `the prompt has ${prompt.length} tokens; the context window is ${contextWindow}`, 'messages', 'context_length_exceeded');
    }
    return Math.min(requested ?? room, room);
  }

  function sampling(request: { temperature?: number | null; top_p?: number | null; stop?: string | string[] | null; seed?: number | null }): SharedSampling {
    return { temperature: request.temperature ?? 1, topP: request.top_p ?? 1, stopTokens, stopStrings: stopList(request.stop), seed: request.seed ?? null };
  }

  function newChoice(index: number, parseTools: boolean, stopStrings: readonly string[], idPrefix: string): ChoiceState {
    return {
      index,
      ids: [],
      logprobs: [],
      text: '',
      decoder: new StreamingDecoder(tokenizer, { skipSpecialTokens: true }),
      splitter: new OutputSplitter({ parseTools, stopStrings, idPrefix }),
      pendingLogprobs: 0,
      streamedToolCalls: 0,
    };
  }

  /** Adds a sampled id to a choice (stop ids add no text). */
  function push(choice: ChoiceState, token: number, logprob: number): void {
    choice.ids.push(token);
    choice.logprobs.push(logprob);
    choice.pendingLogprobs++;
    if (!stopTokens.includes(token)) choice.text += choice.decoder.push(token);
  }

  /** Streaming: adds a sampled id and returns the events it makes emittable. */
  function pushAndSplit(choice: ChoiceState, token: number, logprob: number): SplitEvent[] {
    push(choice, token, logprob);
    return choice.splitter.update(choice.text);
  }

  function finishChoice(choice: ChoiceState): SplitEvent[] {
    choice.text += choice.decoder.flush();
    return choice.splitter.finish(choice.text);
  }

  /** Log-prob entries (chat format) of the choice's ids [from, to), the final stop id left out. */
  function chatLogprobs(choice: ChoiceState, from: number, to: number): { token: string; logprob: number; bytes: number[]; top_logprobs: [] }[] {
    const entries = [];
    for (let i = from; i < to; i++) {
      const id = choice.ids[i]!;
      if (stopTokens.includes(id)) continue;
      entries.push({ token: tokenizer.decode([id]), logprob: choice.logprobs[i]!, bytes: [...(tokenizer.tokenBytes(id) ?? [])], top_logprobs: [] as [] });
    }
    return entries;
  }

  function finishReason(row: BatchRow, toolCalls: number): 'stop' | 'length' | 'tool_calls' {
    if (toolCalls > 0) return 'tool_calls';
    return row.finishReason;
  }

  /** Calls `onFinished` with the call once the response has fully left (its 'finish' event), if it ever does. */
  function whenFinished(response: ServerResponse, onFinished: ((call: FinishedChat) => void) | undefined): (call: FinishedChat) => void {
    if (onFinished === undefined) return () => {};
    let finished: FinishedChat | undefined;
    response.once('finish', () => {
      if (finished !== undefined) onFinished(finished);
    });
    return (call) => {
      if (!response.destroyed) finished = call;
    };
  }

  function finishedChoice(choice: ChoiceState, reason: FinishedChat['choices'][number]['finishReason'], content: string | null, toolCalls: ToolCall[]): FinishedChat['choices'][number] {
    return { tokens: [...choice.ids], logprobs: [...choice.logprobs], finishReason: reason, content, toolCalls };
  }

  async function chat(request: ChatRequest, response: ServerResponse, onFinished?: (call: FinishedChat) => void): Promise<void> {
    const completed = whenFinished(response, onFinished);
    const useTools = (request.tools?.length ?? 0) > 0 && request.tool_choice !== 'none';
    const messages = withToolsPrompt(toMessages(request.messages), useTools ? request.tools! : []);
    const prompt = renderGenerationPrompt(messages, { tokenizer }).tokens;
    const maxNewTokens = budget(prompt, request.max_completion_tokens ?? request.max_tokens);
    const shared = sampling(request);
    const n = request.n ?? 1;
    const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
    const choices = Array.from({ length: n }, (_, index) => newChoice(index, useTools, shared.stopStrings, `call_${randomBytes(6).toString('hex')}_`));
    const wantLogprobs = request.logprobs === true;

    if (request.stream !== true) {
      const rows = await Promise.all(choices.map((choice) => batcher.submit({ prompt, maxNewTokens, sampling: shared, onToken: (token, logprob) => push(choice, token, logprob) })));
      const finished: FinishedChat['choices'] = [];
      const body = rows.map((row, i) => {
        const choice = choices[i]!;
        const events = finishChoice(choice);
        const content = events.flatMap((event) => (event.kind === 'content' ? [event.text] : [])).join('');
        const toolCalls = events.flatMap((event) => (event.kind === 'tool_call' ? [event.call] : []));
        finished.push(finishedChoice(choice, finishReason(row, toolCalls.length), toolCalls.length > 0 && content.trim() === '' ? null : content, toolCalls));
        return {
          index: i,
          message: {
            role: 'assistant',
            content: toolCalls.length > 0 && content.trim() === '' ? null : content,
            refusal: null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls.map(openAiToolCall) } : {}),
          },
          logprobs: wantLogprobs ? { content: chatLogprobs(choice, 0, choice.ids.length), refusal: null } : null,
          finish_reason: finishReason(row, toolCalls.length),
        };
      });
      const completionTokens = rows.reduce((sum, row) => sum + row.tokens.length, 0);
      completed({ prompt, choices: finished });
      return sendJson(response, 200, {
        id,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: modelName,
        system_fingerprint: null,
        choices: body,
        usage: { prompt_tokens: prompt.length, completion_tokens: completionTokens, total_tokens: prompt.length + completionTokens },
      });
    }

    const sse = startSse(response);
    const chunk = (delta: Record<string, unknown>, choice: ChoiceState, finish: string | null): void => {
      const from = choice.ids.length - choice.pendingLogprobs;
      const logprobs = wantLogprobs ? { content: chatLogprobs(choice, from, choice.ids.length), refusal: null } : null;
      choice.pendingLogprobs = 0;
      sse.send({
        id,
        object: 'chat.completion.chunk',
        created: Math.floor(Date.now() / 1000),
        model: modelName,
        system_fingerprint: null,
        choices: [{ index: choice.index, delta, logprobs, finish_reason: finish }],
      });
    };
    const streamed = choices.map(() => ({ content: '', toolCalls: [] as ToolCall[] }));
    const emit = (choice: ChoiceState, events: SplitEvent[]): void => {
      for (const event of events) {
        if (event.kind === 'content') {
          streamed[choice.index]!.content += event.text;
          chunk({ content: event.text }, choice, null);
        } else {
          streamed[choice.index]!.toolCalls.push(event.call);
          chunk({ tool_calls: [{ index: choice.streamedToolCalls++, ...openAiToolCall(event.call) }] }, choice, null);
        }
      }
    };
    for (const choice of choices) chunk({ role: 'assistant', content: '' }, choice, null);
    const rows = await Promise.all(
      choices.map(async (choice) => {
        const row = await batcher.submit({ prompt, maxNewTokens, sampling: shared, onToken: (token, logprob) => emit(choice, pushAndSplit(choice, token, logprob)) });
        emit(choice, finishChoice(choice));
        chunk({}, choice, finishReason(row, choice.splitter.toolCallCount));
        return row;
      }),
    );
    completed({
      prompt,
      choices: choices.map((choice, i) => {
        const { content, toolCalls } = streamed[i]!;
        return finishedChoice(choice, finishReason(rows[i]!, toolCalls.length), toolCalls.length > 0 && content.trim() === '' ? null : content, toolCalls);
      }),
    });
    if (request.stream_options?.include_usage === true) {
      const completionTokens = rows.reduce((sum, row) => sum + row.tokens.length, 0);
      sse.send({
        id,
        object: 'chat.completion.chunk',
        created: Math.floor(Date.now() / 1000),
        model: modelName,
        system_fingerprint: null,
        choices: [],
        usage: { prompt_tokens: prompt.length, completion_tokens: completionTokens, total_tokens: prompt.length + completionTokens },
      });
    }
    sse.end();
  }

  async function complete(request: CompletionRequest, response: ServerResponse): Promise<void> {
    const prompts = completionPrompts(request.prompt);
    const shared = sampling(request);
    const n = request.n ?? 1;
    const id = `cmpl-${randomBytes(12).toString('hex')}`;
    const wantLogprobs = request.logprobs === 0;
    const jobs = prompts.flatMap((prompt, p) => {
      const maxNewTokens = budget(prompt, request.max_tokens ?? 16);
      return Array.from({ length: n }, (_, j) => ({ prompt, maxNewTokens, choice: newChoice(p * n + j, false, shared.stopStrings, '') }));
    });
    const echoText = (prompt: readonly number[]): string => (request.echo === true ? tokenizer.decode(prompt, { skipSpecialTokens: true }) : '');
    const logprobsOf = (choice: ChoiceState, from: number, to: number, offset: number) => {
      const tokens: string[] = [];
      const tokenLogprobs: number[] = [];
      const textOffset: number[] = [];
      for (let i = from; i < to; i++) {
        if (stopTokens.includes(choice.ids[i]!)) continue;
        const token = tokenizer.decode([choice.ids[i]!]);
        textOffset.push(offset);
        offset += token.length;
        tokens.push(token);
        tokenLogprobs.push(choice.logprobs[i]!);
      }
      return { tokens, token_logprobs: tokenLogprobs, top_logprobs: null, text_offset: textOffset };
    };
    const usage = (rows: BatchRow[]) => {
      const promptTokens = prompts.reduce((sum, prompt) => sum + prompt.length * n, 0);
      const completionTokens = rows.reduce((sum, row) => sum + row.tokens.length, 0);
      return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    };

    if (request.stream !== true) {
      const rows = await Promise.all(jobs.map((job) => batcher.submit({ prompt: job.prompt, maxNewTokens: job.maxNewTokens, sampling: shared, onToken: (token, logprob) => push(job.choice, token, logprob) })));
      const choices = rows.map((row, i) => {
        const { choice, prompt } = jobs[i]!;
        const text = finishChoice(choice).map((event) => (event.kind === 'content' ? event.text : '')).join('');
        const echo = echoText(prompt);
        return { index: choice.index, text: echo + text, logprobs: wantLogprobs ? logprobsOf(choice, 0, choice.ids.length, echo.length) : null, finish_reason: row.finishReason };
      });
      return sendJson(response, 200, { id, object: 'text_completion', created: Math.floor(Date.now() / 1000), model: modelName, system_fingerprint: null, choices, usage: usage(rows) });
    }

    const sse = startSse(response);
    const offsets = jobs.map((job) => echoText(job.prompt).length);
    const chunk = (i: number, text: string, finish: string | null): void => {
      const { choice } = jobs[i]!;
      const from = choice.ids.length - choice.pendingLogprobs;
      choice.pendingLogprobs = 0;
      const logprobs = wantLogprobs ? logprobsOf(choice, from, choice.ids.length, offsets[i]!) : null;
      offsets[i]! += text.length;
      sse.send({ id, object: 'text_completion', created: Math.floor(Date.now() / 1000), model: modelName, choices: [{ index: choice.index, text, logprobs, finish_reason: finish }] });
    };
    const emit = (i: number, events: SplitEvent[]): void => {
      for (const event of events) if (event.kind === 'content') chunk(i, event.text, null);
    };
    jobs.forEach((job, i) => {
      const echo = echoText(job.prompt);
      if (echo !== '') {
        offsets[i] = 0;
        chunk(i, echo, null);
      }
    });
    const rows = await Promise.all(
      jobs.map(async (job, i) => {
        const row = await batcher.submit({ prompt: job.prompt, maxNewTokens: job.maxNewTokens, sampling: shared, onToken: (token, logprob) => emit(i, pushAndSplit(job.choice, token, logprob)) });
        emit(i, finishChoice(job.choice));
        chunk(i, '', row.finishReason);
        return row;
      }),
    );
    if (request.stream_options?.include_usage === true) {
      sse.send({ id, object: 'text_completion', created: Math.floor(Date.now() / 1000), model: modelName, choices: [], usage: usage(rows) });
    }
    sse.end();
  }

  /** Completion prompts as ids: text gets `<|bos|>` in front (as in training); ids are taken as given. */
  function completionPrompts(prompt: CompletionRequest['prompt']): number[][] {
    const bos = tokenizer.specialTokens.bos;
    if (typeof prompt === 'string') return [[bos, ...tokenizer.encode(prompt)]];
    if (prompt.every((item) => typeof item === 'string')) return (prompt as string[]).map((text) => [bos, ...tokenizer.encode(text)]);
    if (prompt.every((item) => typeof item === 'number')) return [prompt as number[]];
    return prompt as number[][];
  }

  return { handle, readBody, chat };
}

function openAiToolCall(call: ToolCall): { id: string; type: 'function'; function: { name: string; arguments: string } } {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } };
}

/** Server-sent events: `data: {json}\n\n` per chunk, `data: [DONE]` at the end. */
function startSse(response: ServerResponse): { send(value: unknown): void; end(): void } {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  response.flushHeaders();
  return {
    send: (value) => {
      if (!response.destroyed) response.write(`data: ${JSON.stringify(value)}\n\n`);
    },
    end: () => {
      if (!response.destroyed) response.end('data: [DONE]\n\n');
    },
  };
}
