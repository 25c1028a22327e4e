/**
 * `OpenAIPolicy`: any OpenAI-compatible chat-completions server as a `Policy` — vLLM, SGLang,
 * Ollama, a llama.cpp server, a hosted API, or agentrl's own `serve-policy`.
 *
 *   const policy = new OpenAIPolicy({ baseURL: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen2.5-7B-Instruct', returnTokenIds: true });
 *   const reply = await policy.chat({ messages, tools: [calculator] });   // OpenAI-level call, tools as function schemas
 *   const generation = await policy.generate({ prompt, maxNewTokens: 256 }); // the token-level Policy contract
 *
 * Options fall back to the environment: `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `AGENTRL_MODEL`.
 *
 * `generate` reads the chat messages back out of the prompt ids (the chat template), sends them,
 * and turns the answer into ids of `tokenizer`:
 * - when the server's tokens are tokens of `tokenizer` — ids from vLLM's
 *   `return_tokens_as_token_ids`, or each token's `bytes` exactly one token of it (the same
 *   tokenizer on both sides) — those ids and their log-probs are the generation, as sampled
 *   (unless the answer holds tool calls, which are rendered as below);
 * - otherwise the text (content, then each tool call rendered as `<tool_call>{…}</tool_call>`) is
 *   encoded with `tokenizer`, and each server token's log-prob is placed on the token holding its
 *   first byte (the sequence log-prob is kept; a token covering no server token gets 0). Without
 *   log-probs from the server every log-prob is 0.
 * - An answer that ended on its own gets the stop token appended (log-prob 0, as servers leave it
 *   out); stop strings are applied here, the text ending right after the first one (see
 *   `sendStopStrings`); `maxNewTokens` and the context window are enforced here too.
 *
 * Retries, timeouts and errors: see openai-http.ts.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { Message, Tool } from '../core/types.ts';
import { assistantText, renderToolCall } from '../chat/chat-template.ts';
import { byteTokenizer, specialTokenById, type Tokenizer } from '../chat/tokenizer.ts';
import { PolicyRequestError, postJson, type RetryOptions } from './openai-http.ts';
import {
  parseChatCompletion,
  toolSchema,
  toWireMessages,
  type ChatCompletion,
  type TokenLogprob,
} from './openai-wire.ts';
import { generationText, resolveRequest, type ResolvedRequest } from './request.ts';
import { firstStopStringEnd, messagesFromTokens } from './scripted-policy.ts';
import type { GenerateBatchOptions, GenerateRequest, Generation, Policy } from './types.ts';

export interface OpenAIPolicyOptions extends RetryOptions {
  /** Server root including `/v1`. Default `OPENAI_BASE_URL`, else https://api.openai.com/v1. */
  baseURL?: string;
  /** Default `OPENAI_API_KEY`; none is sent when unset (local servers). */
  apiKey?: string;
  /** Default `AGENTRL_MODEL`; required one way or the other. */
  model?: string;
  /** Tokenizer of the prompt and generated ids. Default the built-in byte tokenizer. */
  tokenizer?: Tokenizer;
  /** Longest prompt + generation, in `tokenizer` ids. Default Infinity. */
  contextWindow?: number;
  /** Tools sent with every `generate` request (function schemas). Default none. */
  tools?: readonly Tool[];
  /** Ask for per-token log-probs (`logprobs: true`). Default true. */
  logprobs?: boolean;
  /** Ask vLLM for token ids (`return_tokens_as_token_ids`); other servers may reject it. Default false. */
  returnTokenIds?: boolean;
  /**
   * Send stop strings to the server. Servers drop a matched stop string from the answer and most
   * do not say which one matched, so by default stop strings are applied here (the text is cut
   * right after the first one) and not sent; turn on for vLLM, which names it in `stop_reason`.
   * Default false.
   */
  sendStopStrings?: boolean;
  /** Extra fields merged into every request body (e.g. `{ top_k: 20 }`). */
  extraBody?: Record<string, unknown>;
  /** Requests of one `generateBatch` in flight at once. Default 8. */
  concurrency?: number;
  /** Where the defaults are read. Default `process.env`. */
  environment?: Record<string, string | undefined>;
  /** Waits between retries. Default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
}

export interface ChatOptions {
  messages: readonly Message[];
  tools?: readonly Tool[];
  /** 'auto' (default when tools are given), 'none', 'required' or a tool name. */
  toolChoice?: 'auto' | 'none' | 'required' | string;
  maxTokens?: number;
  /** Default 1. */
  temperature?: number;
  topP?: number;
  seed?: number;
  stop?: readonly string[];
  /** Cancels the request (the fetch in flight, or the wait before a retry): `chat` rejects with `signal.reason`. */
  signal?: AbortSignal;
}

export class OpenAIPolicy implements Policy {
  readonly tokenizer: Tokenizer;
  readonly contextWindow: number;
  readonly baseURL: string;
  readonly model: string;
  private readonly options: OpenAIPolicyOptions;
  private readonly apiKey: string | undefined;

  constructor(options: OpenAIPolicyOptions = {}) {
    const environment = options.environment ?? process.env;
    const model = options.model ?? environment.AGENTRL_MODEL;
    if (model === undefined || model === '')
      throw new InvalidArgumentError('OpenAIPolicy needs a model: pass { model } or set AGENTRL_MODEL');
    const baseURL = options.baseURL ?? environment.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
    if (!/^https?:\/\//.test(baseURL))
      throw new InvalidArgumentError(`baseURL must start with http:// or https://, got "${baseURL}"`, { baseURL });
    const concurrency = options.concurrency ?? 8;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new InvalidArgumentError(`concurrency must be a positive integer, got ${concurrency}`, { concurrency });
    this.options = options;
    this.model = model;
    this.baseURL = baseURL.replace(/\/+$/, '');
    this.apiKey = options.apiKey ?? environment.OPENAI_API_KEY;
    this.tokenizer = options.tokenizer ?? byteTokenizer;
    this.contextWindow = options.contextWindow ?? Infinity;
  }

  /** One chat completion (the first choice), checked. */
  async chat(request: ChatOptions): Promise<ChatCompletion> {
    const { messages, tools = [], toolChoice, maxTokens, temperature, topP, seed, stop = [], signal } = request;
    const body: Record<string, unknown> = {
      model: this.model,
      messages: toWireMessages(messages),
      ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
      ...(temperature === undefined ? {} : { temperature }),
      ...(topP === undefined || topP === 1 ? {} : { top_p: topP }),
      ...(seed === undefined ? {} : { seed }),
      ...(stop.length === 0 ? {} : { stop: [...stop] }),
      ...((this.options.logprobs ?? true) ? { logprobs: true } : {}),
      ...(this.options.returnTokenIds === true ? { return_tokens_as_token_ids: true } : {}),
      ...this.options.extraBody,
    };
    if (tools.length > 0) {
      body.tools = tools.map(toolSchema);
      const choice = toolChoice ?? 'auto';
      body.tool_choice = ['auto', 'none', 'required'].includes(choice)
        ? choice
        : { type: 'function', function: { name: choice } };
    }
    const url = `${this.baseURL}/chat/completions`;
    const answer = await postJson(url, body, {
      ...this.options,
      headers: this.apiKey === undefined || this.apiKey === '' ? {} : { authorization: `Bearer ${this.apiKey}` },
      ...(signal === undefined ? {} : { signal }),
    });
    const completion = parseChatCompletion(answer);
    if (typeof completion === 'string') {
      const text = JSON.stringify(answer).slice(0, 500);
      throw new PolicyRequestError(`POST ${url}: the answer is not a chat completion (${completion}): ${text}`, {
        url,
        status: 200,
        body: text,
        attempts: 1,
      });
    }
    return completion;
  }

  async generate(request: GenerateRequest): Promise<Generation> {
    return this.generateOne(request);
  }

  /**
   * Up to `concurrency` requests in flight at once, results in request order. An aborted
   * `signal` cancels the requests in flight and starts no more: the call rejects with its reason.
   */
  async generateBatch(
    requests: readonly GenerateRequest[],
    { signal }: GenerateBatchOptions = {},
  ): Promise<Generation[]> {
    for (const request of requests) resolveRequest(request, this.tokenizer, this.contextWindow);
    signal?.throwIfAborted();
    const results = new Array<Generation>(requests.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < requests.length) {
        signal?.throwIfAborted();
        const index = next++;
        results[index] = await this.generateOne(at(requests, index, 'requests'), signal);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 8, requests.length) }, worker));
    return results;
  }

  private async generateOne(request: GenerateRequest, signal?: AbortSignal): Promise<Generation> {
    const resolved = resolveRequest(request, this.tokenizer, this.contextWindow);
    const messages = messagesFromTokens(resolved.prompt, this.tokenizer, { includeUnfinished: true });
    const open = messages.at(-1);
    if (open === undefined)
      throw new InvalidArgumentError(
        'OpenAIPolicy needs a chat-template prompt (renderGenerationPrompt); no messages were found in it',
      );
    if (open.role === 'assistant') {
      if (open.content !== '')
        throw new InvalidArgumentError(
          'OpenAIPolicy cannot continue a partly written assistant message; end the prompt with an empty <|assistant|>',
        );
      messages.pop();
    }
    const completion = await this.chat({
      messages,
      ...(this.options.tools === undefined ? {} : { tools: this.options.tools }),
      maxTokens: resolved.maxNewTokens,
      temperature: resolved.temperature,
      topP: resolved.topP,
      seed: resolved.seed,
      stop: this.options.sendStopStrings === true ? resolved.stopStrings : [],
      ...(signal === undefined ? {} : { signal }),
    });
    return this.toGeneration(completion, resolved);
  }

  private toGeneration(completion: ChatCompletion, request: ResolvedRequest): Generation {
    const entries = completion.tokens;
    let tokens: number[];
    let logprobs: number[];
    const ids =
      completion.toolCalls.length === 0 && completion.malformedToolCalls.length === 0
        ? idsOfEntries(entries ?? [], this.tokenizer)
        : undefined;
    if (ids !== undefined) {
      tokens = ids;
      logprobs = entries!.map((entry) => entry.logprob);
    } else {
      let text = assistantText({ content: completion.content, toolCalls: completion.toolCalls });
      for (const call of completion.malformedToolCalls)
        text += renderToolCall({ name: call.name, arguments: {} }).replace(
          '"arguments":{}',
          `"arguments":${call.arguments}`,
        );
      tokens = this.tokenizer.encode(text);
      logprobs = alignLogprobs(tokens, entries ?? [], this.tokenizer);
    }
    const stopReason = completion.stopReason;
    if (
      typeof stopReason === 'string' &&
      request.stopStrings.includes(stopReason) &&
      !this.tokenizer.decode(tokens).includes(stopReason)
    ) {
      for (const token of this.tokenizer.encode(stopReason)) {
        tokens.push(token);
        logprobs.push(0);
      }
    }
    let finishReason: Generation['finishReason'] = completion.finishReason === 'length' ? 'length' : 'stop';
    const stopAt = firstStopStringEnd(tokens, request.stopStrings, this.tokenizer);
    const lastToken = tokens.at(-1);
    const endsWithStopToken = lastToken !== undefined && request.stopTokens.includes(lastToken);
    const [stopToken] = request.stopTokens;
    if (stopAt !== undefined) {
      tokens = tokens.slice(0, stopAt);
      finishReason = 'stop';
    } else if (finishReason === 'stop' && !endsWithStopToken && stopToken !== undefined) {
      tokens.push(stopToken);
      logprobs.push(0);
    }
    const firstStopToken = tokens.findIndex((id) => request.stopTokens.includes(id));
    if (firstStopToken >= 0) {
      tokens = tokens.slice(0, firstStopToken + 1);
      finishReason = 'stop';
    }
    const room = Math.min(request.maxNewTokens, this.contextWindow - request.prompt.length);
    if (tokens.length > room) {
      tokens = tokens.slice(0, room);
      finishReason = 'length';
    }
    logprobs = logprobs.slice(0, tokens.length).map((logprob) => (Number.isFinite(logprob) ? Math.min(0, logprob) : 0));
    return { tokens, logprobs, text: generationText(tokens, finishReason, request, this.tokenizer), finishReason };
  }
}

/**
 * The ids of the server's tokens in `tokenizer`, when each one is a token of it: a `token_id:<id>`
 * entry, a special token's text, or bytes that are exactly one token's bytes. Undefined otherwise.
 */
export function idsOfEntries(entries: readonly TokenLogprob[], tokenizer: Tokenizer): number[] | undefined {
  if (entries.length === 0) return undefined;
  if (entries.every((entry) => entry.id !== undefined)) return entries.map((entry) => entry.id!);
  const byBytes = tokenIndex(tokenizer);
  const ids: number[] = [];
  for (const entry of entries) {
    const key =
      entry.bytes === undefined || entry.bytes.length === 0 ? `special:${entry.token}` : entry.bytes.join(',');
    const id = byBytes.get(key);
    if (id === undefined) return undefined;
    ids.push(id);
  }
  return ids;
}

const tokenIndexes = new WeakMap<Tokenizer, Map<string, number>>();

/** Token bytes ("104,105") or "special:<|end|>" → id, built once per tokenizer. */
function tokenIndex(tokenizer: Tokenizer): Map<string, number> {
  let index = tokenIndexes.get(tokenizer);
  if (index !== undefined) return index;
  index = new Map();
  for (const [id, text] of specialTokenById(tokenizer)) index.set(`special:${text}`, id);
  for (let id = 0; id < tokenizer.vocabSize; id++) {
    const bytes = tokenizer.tokenBytes(id);
    if (bytes !== undefined && bytes.length > 0 && !index.has(bytes.join(','))) index.set(bytes.join(','), id);
  }
  tokenIndexes.set(tokenizer, index);
  return index;
}

/**
 * Server tokens' log-probs placed on `tokens` by byte offset: each server token's log-prob goes to
 * the token that holds its first byte. When the server's bytes do not spell the same text, the
 * log-probs are unknown and all 0.
 */
export function alignLogprobs(
  tokens: readonly number[],
  entries: readonly TokenLogprob[],
  tokenizer: Tokenizer,
): number[] {
  const encoder = new TextEncoder();
  const starts = new Map<number, number>();
  let offset = 0;
  for (const entry of entries) {
    const bytes = entry.bytes ?? Array.from(encoder.encode(entry.token));
    if (bytes.length === 0) continue;
    starts.set(offset, (starts.get(offset) ?? 0) + entry.logprob);
    offset += bytes.length;
  }
  const total = tokens.reduce((sum, id) => sum + (tokenizer.tokenBytes(id)?.length ?? 0), 0);
  if (entries.length === 0 || total !== offset) return tokens.map(() => 0);
  const logprobs: number[] = [];
  let position = 0;
  for (const id of tokens) {
    const length = tokenizer.tokenBytes(id)?.length ?? 0;
    let sum = 0;
    for (let byte = position; byte < position + length; byte++) sum += starts.get(byte) ?? 0;
    logprobs.push(sum);
    position += length;
  }
  return logprobs;
}
