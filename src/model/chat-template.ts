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
 * - Tool calls are rendered after the content as `<tool_call>{"name":…,"arguments":…}</tool_call>`
 *   (JSON.stringify, no spaces), so a model that emits exactly this text re-renders to the same ids.
 * - Generation stops at `<|end|>` (`chatStopTokens`).
 */
import type { Message, ToolCall } from '../core/types.ts';
import { byteTokenizer, specialTokenText, type SpecialTokens, type Tokenizer } from './tokenizer.ts';

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

export function renderToolCall(call: Pick<ToolCall, 'name' | 'arguments'>): string {
  return `<tool_call>${JSON.stringify({ name: call.name, arguments: call.arguments })}</tool_call>`;
}

/** One message: role header, content, `<|end|>`. No `<|bos|>`. */
export function renderMessage(message: Message, { tokenizer = byteTokenizer }: ChatTemplateOptions = {}): RenderedChat {
  const special = tokenizer.specialTokens;
  const isAssistant = message.role === 'assistant';
  const body = tokenizer.encode(isAssistant ? assistantText(message) : message.content);
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
    const piece = renderMessage(message, { tokenizer });
    tokens.push(...piece.tokens);
    assistantMask.push(...piece.assistantMask);
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
 * Tool-call blocks whose JSON is malformed stay in the content and are listed in `invalid`.
 */
export function parseAssistantText(text: string, { idPrefix = 'call_' }: { idPrefix?: string } = {}): {
  content: string;
  toolCalls: ToolCall[];
  invalid: string[];
} {
  const toolCalls: ToolCall[] = [];
  const invalid: string[] = [];
  const content = text.replace(/<tool_call>([\s\S]*?)<\/tool_call>/g, (block: string, json: string) => {
    try {
      const parsed: unknown = JSON.parse(json);
      if (isObject(parsed) && typeof parsed.name === 'string' && isObject(parsed.arguments ?? {})) {
        toolCalls.push({ id: `${idPrefix}${toolCalls.length}`, name: parsed.name, arguments: (parsed.arguments ?? {}) as Record<string, unknown> });
        return '';
      }
    } catch {
      // fall through: keep the block as text
    }
    invalid.push(block);
    return block;
  });
  return { content, toolCalls, invalid };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The same template in Jinja, for `tokenizer_config.json` (`transformers`' `apply_chat_template`).
 * `tool_calls` follow the OpenAI shape. `arguments` given as a dict render exactly like
 * `renderToolCall`; given as a JSON string they are inserted verbatim (so whitespace inside that
 * string may differ from what `renderToolCall` produces).
 */
export const chatTemplateJinja =
  "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>' }}" +
  "{% if message['content'] %}{{ message['content'] }}{% endif %}" +
  "{% if message['role'] == 'assistant' and message['tool_calls'] %}{% for call in message['tool_calls'] %}" +
  "{% set function = call['function'] if call['function'] is defined else call %}" +
  "{% set arguments = function['arguments'] if function['arguments'] is string else function['arguments'] | tojson(separators=(',', ':')) %}" +
  "{{ '<tool_call>{\"name\":' + (function['name'] | tojson) + ',\"arguments\":' + arguments + '}</tool_call>' }}" +
  "{% endfor %}{% endif %}{{ '" + specialTokenText.end + "' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '" + specialTokenText.assistant + "' }}{% endif %}";
