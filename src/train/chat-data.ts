/**
 * Chat datasets as JSONL in the OpenAI messages format, one conversation per line:
 *
 *   {"messages":[{"role":"user","content":"…"},
 *                {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
 *                  "function":{"name":"search","arguments":"{\"q\":\"…\"}"}}]},
 *                {"role":"tool","tool_call_id":"c1","content":"…"}, …]}
 *
 * Blank lines are skipped. A malformed line is a `DataFormatError` naming the file, the 1-based
 * line and what is wrong. Content may be a string, null (assistant with tool calls) or a list of
 * text parts; tool-call arguments may be a JSON string (OpenAI) or an object.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { DataFormatError, InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import type { Message, ToolCall } from '../core/types.ts';
import { jsonObjectSchema } from '../core/json-object.ts';

export interface ChatExample {
  messages: Message[];
}

const textPartSchema = z.object({ type: z.literal('text'), text: z.string() });

const openAiToolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function').optional(),
  function: z.object({
    name: z.string().min(1),
    arguments: z.union([z.string(), jsonObjectSchema]),
  }),
});

const openAiMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(textPartSchema), z.null()]).optional(),
  tool_calls: z.array(openAiToolCallSchema).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
});

const chatLineSchema = z.object({ messages: z.array(openAiMessageSchema).min(1) });

type OpenAiMessage = z.infer<typeof openAiMessageSchema>;

/** Parses JSONL text; `file` is used in error messages. */
export function parseChatJsonl(text: string, { file = '<input>' }: { file?: string } = {}): ChatExample[] {
  const examples: ChatExample[] = [];
  text.split(/\r?\n/).forEach((lineText, index) => {
    const line = index + 1;
    if (lineText.trim() === '') return;
    const fail = (what: string, key?: string): never => {
      throw new DataFormatError(`${file}:${line}: ${key === undefined ? '' : `${key}: `}${what}`, { file, line, key });
    };
    let json: unknown;
    try {
      json = JSON.parse(lineText);
    } catch (error) {
      fail(`invalid JSON (${(error as Error).message})`);
    }
    const parsed = chatLineSchema.safeParse(json);
    if (!parsed.success) {
      const issue = at(parsed.error.issues, 0, 'validation issues');
      fail(issue.message, issue.path.length > 0 ? issue.path.join('.') : undefined);
    }
    const messages = parsed.data!.messages.map((message, i) =>
      toMessage(message, (what, key) => fail(what, `messages.${i}${key ? `.${key}` : ''}`)),
    );
    examples.push({ messages });
  });
  return examples;
}

/** Reads a JSONL chat file. */
export async function readChatJsonl(path: string): Promise<ChatExample[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new DataFormatError(`${path}: cannot read (${(error as Error).message})`, { file: path });
  }
  return parseChatJsonl(text, { file: path });
}

function toMessage(message: OpenAiMessage, fail: (what: string, key?: string) => never): Message {
  const content =
    typeof message.content === 'string'
      ? message.content
      : Array.isArray(message.content)
        ? message.content.map((part) => part.text).join('')
        : undefined;
  const toolCalls = message.tool_calls ?? [];
  if (toolCalls.length > 0 && message.role !== 'assistant')
    fail(`tool_calls are only allowed on assistant messages, not ${message.role}`, 'tool_calls');
  if (content === undefined && !(message.role === 'assistant' && toolCalls.length > 0)) {
    fail('content is missing (only an assistant message with tool_calls may omit it)', 'content');
  }
  const result: Message = { role: message.role, content: content ?? '' };
  if (toolCalls.length > 0)
    result.toolCalls = toolCalls.map((call, i) =>
      toToolCall(call, (what) => fail(what, `tool_calls.${i}.function.arguments`)),
    );
  if (message.tool_call_id !== undefined) result.toolCallId = message.tool_call_id;
  if (message.name !== undefined) result.name = message.name;
  return result;
}

/** OpenAI `{id, type: 'function', function: {name, arguments: JSON string}}` → core ToolCall. */
export function fromOpenAiToolCall(call: {
  id: string;
  function: { name: string; arguments: string | Record<string, unknown> };
}): ToolCall {
  return toToolCall(call, (what) => {
    throw new DataFormatError(`tool call "${call.id}": ${what}`, { key: 'function.arguments' });
  });
}

function toToolCall(
  call: { id: string; function: { name: string; arguments: string | Record<string, unknown> } },
  fail: (what: string) => never,
): ToolCall {
  let args: unknown = call.function.arguments;
  if (typeof args === 'string') {
    try {
      args = args.trim() === '' ? {} : JSON.parse(args);
    } catch (error) {
      fail(`arguments are not valid JSON (${(error as Error).message})`);
    }
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) fail('arguments must be a JSON object');
  return { id: call.id, name: call.function.name, arguments: args as Record<string, unknown> };
}

/**
 * Seeded train / held-out split: `round(n · heldOutFraction)` items (at least one when the
 * fraction is positive and n ≥ 2) go to heldOut. Both keep the input order.
 */
export function splitHeldOut<T>(
  items: readonly T[],
  { heldOutFraction = 0.1, seed = 0 }: { heldOutFraction?: number; seed?: number } = {},
): {
  train: T[];
  heldOut: T[];
} {
  if (!(heldOutFraction >= 0 && heldOutFraction < 1)) {
    throw new InvalidArgumentError(`heldOutFraction must be in [0, 1), got ${heldOutFraction}`, { heldOutFraction });
  }
  let count = Math.round(items.length * heldOutFraction);
  if (heldOutFraction > 0 && items.length >= 2) count = Math.max(1, count);
  const order = new Rng(seed).shuffle(items.map((_, i) => i));
  const held = new Set(order.slice(0, count));
  return { train: items.filter((_, i) => !held.has(i)), heldOut: items.filter((_, i) => held.has(i)) };
}
