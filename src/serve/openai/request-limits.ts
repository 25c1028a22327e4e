/**
 * The bounds every OpenAI-shaped request (serve-policy, the training gateway) is held to before
 * any tokenization, rendering or generation, so one request cannot hold the server for minutes:
 *
 *   body bytes                        413 (before the body is read when Content-Length says so)
 *   messages, characters per message  400 `messages` / `messages[i]`
 *   characters of prompt text         400 `messages` / `prompt` (what one request makes the tokenizer read)
 *   tools, characters per tool        400 `tools` / `tools[i]`
 *   rows generated (chat `n`, completions prompts × `n`)   400 `n`
 *   characters per stop string        400 `stop`
 *   max_tokens over the context       400 `max_tokens`
 *   max_tokens over maxCompletionTokens   400 `max_tokens` (a policy without a window: 4096 unless set)
 *   a prompt certainly over the context (counted in characters)   400 context_length_exceeded
 *
 * Each refusal is OpenAI's error shape and names the limit and the value that broke it. The
 * character check is cheap and one-sided: a prompt of `c` characters has at least
 * `c / charsPerToken` tokens, where `charsPerToken` is 1 for agentrl's byte format (each UTF-16
 * unit is at least one byte, one byte one token) and, for a model's own tokenizer, its longest
 * token in bytes × 4 (a normaliser may compose up to 4 code units into one character). It assumes
 * the template renders every character it is given; a template that drops text (an earlier turn's
 * reasoning) could see a prompt refused that would have fit, only past that generous margin. The
 * exact count is the rendered prompt's, checked after rendering (policy-context.ts `budget`).
 */
import { z } from 'zod';
import type { Tokenizer } from '../../chat/tokenizer.ts';
import { InvalidArgumentError } from '../../core/errors.ts';
import { RequestError } from '../error-bodies.ts';
import type { ChatRequest, CompletionRequest } from './protocol.ts';

/** The completion budget of a policy whose context window is unbounded, when `maxCompletionTokens` is not set. */
export const UNBOUNDED_COMPLETION_TOKENS = 4096;

export const requestLimitsSchema = z.object({
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024)
    .describe('request body bytes at most (413 past it)'),
  maxMessages: z.number().int().positive().default(2048).describe('chat messages per request at most'),
  maxMessageChars: z
    .number()
    .int()
    .positive()
    .default(512 * 1024)
    .describe("characters per chat message at most (its content and its tool calls' names and arguments)"),
  maxPromptChars: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024)
    .describe(
      'characters of prompt text per request at most (all messages and tools; all completion prompts): what is tokenized at once',
    ),
  maxTools: z.number().int().min(0).default(128).describe('tools per request at most'),
  maxToolChars: z
    .number()
    .int()
    .positive()
    .default(64 * 1024)
    .describe("characters per tool at most (its function's JSON: name, description, parameters)"),
  maxChoices: z
    .number()
    .int()
    .positive()
    .default(128)
    .describe('rows one request generates at most: chat n, completions prompts × n'),
  maxStopChars: z.number().int().positive().default(1024).describe('characters per stop string at most'),
  maxCompletionTokens: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      `completion tokens per choice at most (max_tokens past it is a 400; a request naming none gets at most this). Default: the context window; ${UNBOUNDED_COMPLETION_TOKENS} for a policy without one (an OpenAIPolicy or ScriptedPolicy given no contextWindow)`,
    ),
});
export type RequestLimits = z.output<typeof requestLimitsSchema>;
export type RequestLimitsInput = z.input<typeof requestLimitsSchema>;

/** The limits with their defaults filled in; a value out of range is an InvalidArgumentError naming the field. */
export function parseRequestLimits(input: RequestLimitsInput = {}): RequestLimits {
  const parsed = requestLimitsSchema.strict().safeParse(input);
  if (!parsed.success)
    throw new InvalidArgumentError(`request limits: ${z.prettifyError(parsed.error)}`, {
      allowed: Object.keys(requestLimitsSchema.shape),
    });
  return parsed.data;
}

/** What a request is checked against: the limits, the model's context window and how many characters one token can stand for. */
export interface RequestBounds {
  limits: RequestLimits;
  contextWindow: number;
  /** Completion tokens per choice at most (`completionCap`). */
  maxCompletionTokens: number;
  /** Characters one token covers at most (see the header); 1 for agentrl's byte format. */
  charsPerToken: number;
}

/** The most completion tokens one choice may ask for: `maxCompletionTokens` when set, else the window (4096 for an unbounded one). */
export function completionCap(limits: RequestLimits, contextWindow: number): number {
  if (limits.maxCompletionTokens !== undefined) return limits.maxCompletionTokens;
  return Number.isFinite(contextWindow) ? contextWindow : UNBOUNDED_COMPLETION_TOKENS;
}

/** 400 naming the limit and the value; the flag that sets the limit is in the message. */
function overLimit(what: string, value: number, limit: number, flag: string, param: string): RequestError {
  return new RequestError(
    400,
    `${what} is ${value}; this server accepts at most ${limit} (${flag})`,
    param,
    'request_too_large',
  );
}

/** Checks a chat request's shape against the bounds; throws a RequestError before any rendering. */
export function checkChatRequest(request: ChatRequest, bounds: RequestBounds): void {
  const { limits, contextWindow, charsPerToken } = bounds;
  if (request.messages.length > limits.maxMessages)
    throw overLimit('the number of messages', request.messages.length, limits.maxMessages, 'maxMessages', 'messages');
  const tools = request.tools ?? [];
  if (tools.length > limits.maxTools)
    throw overLimit('the number of tools', tools.length, limits.maxTools, 'maxTools', 'tools');
  checkChoices(request.n ?? 1, limits);
  checkStops(request.stop, limits);
  checkMaxTokens(request.max_completion_tokens ?? request.max_tokens, bounds, 'max_completion_tokens');
  let chars = 0;
  request.messages.forEach((message, index) => {
    const length = messageChars(message);
    if (length > limits.maxMessageChars)
      throw overLimit(
        `messages[${index}] length`,
        length,
        limits.maxMessageChars,
        'maxMessageChars',
        `messages[${index}]`,
      );
    chars += length;
  });
  tools.forEach((tool, index) => {
    const length = JSON.stringify(tool.function).length;
    if (length > limits.maxToolChars)
      throw overLimit(`tools[${index}] length`, length, limits.maxToolChars, 'maxToolChars', `tools[${index}]`);
    if (request.tool_choice !== 'none') chars += length;
  });
  if (chars > limits.maxPromptChars)
    throw overLimit('the prompt length in characters', chars, limits.maxPromptChars, 'maxPromptChars', 'messages');
  checkCharacters(chars, contextWindow, charsPerToken, 'messages');
}

/** Checks a completion request against the bounds before any prompt is encoded. */
export function checkCompletionRequest(request: CompletionRequest, bounds: RequestBounds): void {
  const { limits, contextWindow, charsPerToken } = bounds;
  const prompts = promptList(request.prompt);
  const n = request.n ?? 1;
  if (prompts.length * n > limits.maxChoices)
    throw overLimit(
      `prompts × n (${prompts.length} × ${n})`,
      prompts.length * n,
      limits.maxChoices,
      'maxChoices',
      prompts.length > 1 ? 'prompt' : 'n',
    );
  checkStops(request.stop, limits);
  checkMaxTokens(request.max_tokens, bounds, 'max_tokens');
  const chars = prompts.reduce((sum, prompt) => sum + (typeof prompt === 'string' ? prompt.length : 0), 0);
  if (chars > limits.maxPromptChars)
    throw overLimit('the prompts length in characters', chars, limits.maxPromptChars, 'maxPromptChars', 'prompt');
  for (const prompt of prompts) {
    if (typeof prompt === 'string') checkCharacters(prompt.length, contextWindow, charsPerToken, 'prompt');
    else if (prompt.length >= contextWindow)
      throw contextExceeded(`a prompt has ${prompt.length} tokens`, contextWindow, 'prompt');
  }
}

/** The characters a chat message puts into the prompt: content parts, tool-call names and arguments. */
function messageChars(message: ChatRequest['messages'][number]): number {
  const { content } = message;
  let chars = typeof content === 'string' ? content.length : 0;
  if (Array.isArray(content)) for (const part of content) chars += part.text.length;
  if (message.role === 'assistant')
    for (const call of message.tool_calls ?? []) {
      const args = call.function.arguments;
      chars += call.function.name.length + (typeof args === 'string' ? args.length : JSON.stringify(args).length);
    }
  return chars;
}

function checkChoices(n: number, limits: RequestLimits): void {
  if (n > limits.maxChoices) throw overLimit('n', n, limits.maxChoices, 'maxChoices', 'n');
}

function checkStops(stop: string | string[] | null | undefined, limits: RequestLimits): void {
  for (const text of typeof stop === 'string' ? [stop] : (stop ?? []))
    if (text.length > limits.maxStopChars)
      throw overLimit('a stop string length', text.length, limits.maxStopChars, 'maxStopChars', 'stop');
}

/** A reply budget the window cannot hold even after an empty prompt, or over `maxCompletionTokens`. */
function checkMaxTokens(
  maxTokens: number | null | undefined,
  { contextWindow, maxCompletionTokens }: RequestBounds,
  param: string,
): void {
  if (maxTokens === undefined || maxTokens === null) return;
  if (maxTokens > maxCompletionTokens && maxTokens < contextWindow)
    throw overLimit(param, maxTokens, maxCompletionTokens, 'maxCompletionTokens', param);
  if (maxTokens >= contextWindow)
    throw new RequestError(
      400,
      `${param} is ${maxTokens}; the context window is ${contextWindow} tokens, prompt included, so it must be below ${contextWindow}`,
      param,
      'context_length_exceeded',
    );
}

/** `chars` characters make at least chars / charsPerToken tokens: refused when that already fills the window. */
function checkCharacters(chars: number, contextWindow: number, charsPerToken: number, param: string): void {
  const fewestTokens = Math.ceil(chars / charsPerToken);
  if (fewestTokens >= contextWindow)
    throw contextExceeded(
      `the prompt has ${chars} characters, so at least ${fewestTokens} tokens (a token covers at most ${charsPerToken})`,
      contextWindow,
      param,
    );
}

function contextExceeded(what: string, contextWindow: number, param: string): RequestError {
  return new RequestError(
    400,
    `${what}; the context window is ${contextWindow} tokens`,
    param,
    'context_length_exceeded',
  );
}

function promptList(prompt: CompletionRequest['prompt']): (string | readonly number[])[] {
  if (typeof prompt === 'string') return [prompt];
  if (prompt.every((item) => typeof item === 'number')) return [prompt as number[]];
  return prompt as (string | number[])[];
}

/**
 * How many characters one token of `tokenizer` stands for at most (see the header): its longest
 * token in bytes, × 4 unless `exact` (agentrl's byte format: the text is encoded as it is, and
 * special-token text is never parsed from it). Otherwise a special token's text counts too (a
 * model's tokenizer parses `<|im_end|>` out of a user's text as one token).
 */
export function charsPerTokenOf(tokenizer: Tokenizer, { exact }: { exact: boolean }): number {
  let longest = 1;
  for (let id = 0; id < tokenizer.vocabSize; id++) longest = Math.max(longest, tokenLength(tokenizer, id, exact));
  return exact ? longest : longest * 4;
}

/** The bytes of token `id` (a special token's text when `exact` is false; 0 for an id the vocabulary leaves unused). */
function tokenLength(tokenizer: Tokenizer, id: number, exact: boolean): number {
  try {
    const bytes = tokenizer.tokenBytes(id);
    if (bytes !== undefined) return bytes.length;
    return exact ? 0 : tokenizer.decode([id]).length;
  } catch {
    return 0;
  }
}
