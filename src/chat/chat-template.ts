/**
 * Chat template: a conversation (core `Message[]`) → token ids plus an assistant mask.
 *
 *   <|bos|><|system|>…<|end|><|user|>…<|end|><|assistant|>…<tool_call>{…}</tool_call><|end|><|tool|>…<|end|>
 *
 * - `assistantMask` is 1 exactly on what the assistant produced: its content, its tool-call text
 *   and its `<|end|>`; 0 on `<|bos|>`, role headers and system/user/tool content.
 * - Rendering is a concatenation of per-message pieces, so rendering messages[0..k] is a prefix
 *   of rendering messages[0..k+1], and `renderGenerationPrompt(messages[0..k])` is a prefix of
 *   the rendering with the assistant's reply appended — the rollout keeps ids end to end.
 * - Tool calls are rendered after the content as `<tool_call>{"name":…,"arguments":…}</tool_call>`:
 *   the arguments text as the caller wrote it (`argumentsJson`, an OpenAI-style string) when there
 *   is one, else `JSON.stringify(arguments)` (no spaces), so a model that emits exactly this text
 *   re-renders to the same ids.
 * - Special-token text inside a message (`<|end|>` typed by a user, returned by a tool, or in a
 *   tool description) cannot open or close a turn: the tokenizer never parses it from text, and
 *   the template writes it with U+200B (zero-width space) after its `<` — `<\u200b|end|>` —
 *   so transformers, whose tokenizer does parse special-token text, gives the same ids from the
 *   exported Jinja template (chat-template-jinja.ts), which applies the same escape.
 * - Generation stops at `<|end|>` (`chatStopTokens`).
 */
import type { Message, ToolCall } from '../core/types.ts';
import { byteTokenizer, specialTokenText, type SpecialTokens, type Tokenizer } from './tokenizer.ts';
import { parseToolCalls, type ParsedAssistantText } from './tool-call-format.ts';

export interface RenderedChat {
  tokens: number[];
  /** 1 on tokens the assistant produced (trained on in SFT), 0 elsewhere; same length as tokens. */
  assistantMask: number[];
}

export interface ChatTemplateOptions {
  /** Default: the built-in byte tokenizer. */
  tokenizer?: Tokenizer;
}

const roleToken: Record<Message['role'], keyof SpecialTokens> = {
  system: 'system',
  user: 'user',
  assistant: 'assistant',
  tool: 'tool',
};

/** The text an assistant message stands for: its content followed by its tool calls. */
export function assistantText(message: Pick<Message, 'content' | 'toolCalls'>): string {
  let text = message.content;
  for (const call of message.toolCalls ?? []) text += renderToolCall(call);
  return text;
}

export function renderToolCall(call: Pick<ToolCall, 'name' | 'arguments' | 'argumentsJson'>): string {
  return `<tool_call>{"name":${JSON.stringify(call.name)},"arguments":${call.argumentsJson ?? JSON.stringify(call.arguments)}}</tool_call>`;
}

/** The special-token texts the escape applies to, and where U+200B goes in each. */
const specialTextPattern = new RegExp(
  Object.values(specialTokenText)
    .map((text) => text.replace(/[|]/g, '\\|'))
    .join('|'),
  'g',
);

/** `<|end|>` → `<\u200b|end|>` for the text of each chat special token (see the header). */
export function escapeSpecialTokenText(text: string): string {
  return text.replace(specialTextPattern, (special) => `${special[0]}\u200b${special.slice(1)}`);
}

const escapedTextPattern = new RegExp(
  Object.values(specialTokenText)
    .map((text) => `${text[0]}\u200b${text.slice(1)}`.replace(/[|]/g, '\\|'))
    .join('|'),
  'g',
);

/**
 * The inverse, for reading a message's content back out of rendered ids: escaping the result
 * again gives the same ids (a content that held the escaped form itself reads back as the
 * special-token text, which renders to the same ids).
 */
export function unescapeSpecialTokenText(text: string): string {
  return text.replace(escapedTextPattern, (escaped) => escaped.slice(0, 1) + escaped.slice(2));
}

/** One message: role header, content, `<|end|>`. No `<|bos|>`. */
export function renderMessage(message: Message, { tokenizer = byteTokenizer }: ChatTemplateOptions = {}): RenderedChat {
  const special = tokenizer.specialTokens;
  const isAssistant = message.role === 'assistant';
  const body = tokenizer.encode(escapeSpecialTokenText(isAssistant ? assistantText(message) : message.content));
  const tokens = [special[roleToken[message.role]], ...body, special.end];
  const mark = isAssistant ? 1 : 0;
  const assistantMask = tokens.map((_, i) => (i === 0 ? 0 : mark));
  return { tokens, assistantMask };
}

/** A whole conversation, starting with `<|bos|>`. */
export function renderChat(messages: readonly Message[], options: ChatTemplateOptions = {}): RenderedChat {
  const tokenizer = options.tokenizer ?? byteTokenizer;
  const tokens = [tokenizer.specialTokens.bos];
  const assistantMask = [0];
  for (const message of messages) {
    // One element at a time: a spread passes every id as an argument, and a long message's ids
    // overflow the call stack ("Maximum call stack size exceeded").
    const piece = renderMessage(message, { tokenizer });
    for (const token of piece.tokens) tokens.push(token);
    for (const mark of piece.assistantMask) assistantMask.push(mark);
  }
  return { tokens, assistantMask };
}

/** The conversation followed by `<|assistant|>`, for the model to continue. */
export function renderGenerationPrompt(messages: readonly Message[], options: ChatTemplateOptions = {}): RenderedChat {
  const tokenizer = options.tokenizer ?? byteTokenizer;
  const rendered = renderChat(messages, { tokenizer });
  rendered.tokens.push(tokenizer.specialTokens.assistant);
  rendered.assistantMask.push(0);
  return rendered;
}

/** Token ids that end a generated assistant turn. */
export function chatStopTokens(tokenizer: Tokenizer = byteTokenizer): number[] {
  return [tokenizer.specialTokens.end];
}

/**
 * Splits generated assistant text into content and tool calls (the inverse of `assistantText`).
 * Tool-call blocks that are not a call stay in the content and are listed in `invalid`.
 */
export function parseAssistantText(text: string, options: { idPrefix?: string } = {}): ParsedAssistantText {
  return parseToolCalls('agentrl', text, options);
}

export { chatTemplateJinja } from './chat-template-jinja.ts';
