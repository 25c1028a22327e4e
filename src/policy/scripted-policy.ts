/**
 * `ScriptedPolicy`: a deterministic test double (shipped with the library, STYLE.md §9). It replies
 * from a list or a function of the conversation so far, encodes the reply with the tokenizer,
 * appends the stop token and gives every generated token the same log-prob (default 0).
 *
 *   new ScriptedPolicy({ reply: ['<answer>B</answer>'] });
 *   new ScriptedPolicy({ reply: ({ messages }) => (messages.at(-1)?.content.includes('G') ? '<answer>Right</answer>' : '<answer>Down</answer>') });
 *
 * Like a model it honours `maxNewTokens` (cut → finishReason 'length', no stop token) and stop
 * strings (cut right after the first one → 'stop', no stop token); the reply ignores the
 * sampling temperature and seed.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { Message, Role } from '../core/types.ts';
import { byteTokenizer, type Tokenizer } from '../chat/tokenizer.ts';
import type { ChatFormat } from '../chat/chat-format.ts';
import { unescapeSpecialTokenText } from '../chat/chat-template.ts';
import { decodeGenerated, generationText, resolveRequest, type ResolvedRequest } from './request.ts';
import type { GenerateRequest, Generation, Policy } from './types.ts';

export interface ScriptContext {
  /** The prompt ids. */
  prompt: readonly number[];
  /** The complete chat messages in the prompt (a trailing open `<|assistant|>` header is left out). */
  messages: Message[];
  /** How many replies this policy gave before this one. */
  index: number;
}

export interface ScriptedPolicyOptions {
  /** Replies in order (cycling), or a function of the context. */
  reply: readonly string[] | ((context: ScriptContext) => string);
  /** Default: the built-in byte tokenizer. */
  tokenizer?: Tokenizer;
  /** The chat protocol the rollout renders with (a model's own, src/chat). Default none: agentrl's byte template. */
  chatFormat?: ChatFormat;
  /** The log-prob reported for every generated token. Default 0. */
  logprob?: number;
  /** Default Infinity (no window). */
  contextWindow?: number;
}

export class ScriptedPolicy implements Policy {
  readonly tokenizer: Tokenizer;
  readonly contextWindow: number;
  readonly chatFormat?: ChatFormat;
  private readonly reply: ScriptedPolicyOptions['reply'];
  private readonly logprob: number;
  /** Replies given so far (explicit state: the index of the next list reply). */
  private replies = 0;

  constructor({
    reply,
    tokenizer = byteTokenizer,
    logprob = 0,
    contextWindow = Infinity,
    chatFormat,
  }: ScriptedPolicyOptions) {
    if (chatFormat !== undefined) this.chatFormat = chatFormat;
    if (typeof reply !== 'function' && reply.length === 0)
      throw new InvalidArgumentError('ScriptedPolicy needs at least one reply');
    if (!(logprob <= 0)) throw new InvalidArgumentError(`logprob must be <= 0, got ${logprob}`, { logprob });
    this.reply = reply;
    this.tokenizer = tokenizer;
    this.logprob = logprob;
    this.contextWindow = contextWindow;
  }

  async generate(request: GenerateRequest): Promise<Generation> {
    return this.respond(resolveRequest(request, this.tokenizer, this.contextWindow));
  }

  async generateBatch(requests: readonly GenerateRequest[]): Promise<Generation[]> {
    const resolved = requests.map((request) => resolveRequest(request, this.tokenizer, this.contextWindow));
    return resolved.map((request) => this.respond(request));
  }

  private respond(request: ResolvedRequest): Generation {
    const index = this.replies++;
    const text =
      typeof this.reply === 'function'
        ? this.reply({ prompt: request.prompt, messages: messagesFromTokens(request.prompt, this.tokenizer), index })
        : at(this.reply, index % this.reply.length, 'replies');
    let tokens = this.tokenizer.encode(text);
    let finishReason: Generation['finishReason'] = 'stop';
    const [stopToken] = request.stopTokens;
    const stopAt = firstStopStringEnd(tokens, request.stopStrings, this.tokenizer);
    if (stopAt !== undefined) tokens = tokens.slice(0, stopAt);
    else if (stopToken !== undefined) tokens.push(stopToken);
    else finishReason = 'length';
    const room = Math.min(request.maxNewTokens, this.contextWindow - request.prompt.length);
    if (tokens.length > room) {
      tokens = tokens.slice(0, room);
      finishReason = 'length';
    }
    return {
      tokens,
      logprobs: tokens.map(() => this.logprob),
      text: generationText(tokens, finishReason, request, this.tokenizer),
      finishReason,
    };
  }
}

/** The shortest prefix length of `tokens` whose text contains a stop string, if any. */
export function firstStopStringEnd(
  tokens: readonly number[],
  stopStrings: readonly string[],
  tokenizer: Tokenizer,
): number | undefined {
  if (stopStrings.length === 0) return undefined;
  for (let end = 1; end <= tokens.length; end++) {
    // decodeGenerated: a spare id the tokenizer lacks (a remote sampler may return one) reads as U+FFFD.
    const text = decodeGenerated(tokenizer, tokens.slice(0, end));
    if (stopStrings.some((stop) => text.includes(stop))) return end;
  }
  return undefined;
}

/**
 * Reads chat messages back out of template ids (the inverse of `renderChat` for plain-text
 * messages): each role header starts a message that its `<|end|>` closes. An unclosed message
 * at the end (the generation prompt's `<|assistant|>`) is left out, or kept as far as it goes
 * with `includeUnfinished` (a trajectory cut by the context window).
 */
export function messagesFromTokens(
  ids: readonly number[],
  tokenizer: Tokenizer = byteTokenizer,
  { includeUnfinished = false } = {},
): Message[] {
  const special = tokenizer.specialTokens;
  const roles = new Map<number, Role>([
    [special.system, 'system'],
    [special.user, 'user'],
    [special.assistant, 'assistant'],
    [special.tool, 'tool'],
  ]);
  const messages: Message[] = [];
  let open: { role: Role; start: number } | null = null;
  ids.forEach((id, index) => {
    const role = roles.get(id);
    if (role !== undefined) open = { role, start: index + 1 };
    else if (id === special.end && open !== null) {
      messages.push({
        role: open.role,
        content: unescapeSpecialTokenText(decodeGenerated(tokenizer, ids.slice(open.start, index))),
      });
      open = null;
    }
  });
  const last = open as { role: Role; start: number } | null;
  if (includeUnfinished && last !== null)
    messages.push({
      role: last.role,
      content: unescapeSpecialTokenText(decodeGenerated(tokenizer, ids.slice(last.start))),
    });
  return messages;
}
