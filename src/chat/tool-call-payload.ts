/**
 * The one rule for what a tool call's JSON is, and the one linear scan for `<tool_call>` blocks:
 * every reader of generated text (the env action format, agentrl's byte template, the family
 * formats in tool-call-format.ts, the OpenAI server's output splitter) goes through here.
 *
 *   {"name": "add", "arguments": {"a": 1}}   a call: `name` a non-empty string (read trimmed),
 *                                            `arguments` an object, `{}` when left out
 *   [{…}, {…}]                               several calls, where the format allows a list (smollm2)
 *
 * Anything else is not a call, for one of two reasons (`toolCallErrors`), worded once here.
 * Bounded work (docs/action-limits.md): the block scan is indexOf from a cursor that only moves
 * forward, so a text full of unclosed `<tool_call>` tags costs one pass, not one per tag.
 */
import type { ToolCall } from '../core/types.ts';

export type ToolCallText = Pick<ToolCall, 'name' | 'arguments'>;

export const toolCallErrors = {
  json: 'tool_call is not valid JSON',
  shape: 'tool_call must be {"name": string, "arguments": object}',
} as const;

/** At least one call, or the reason there is none. */
export type ToolCallPayload = { calls: [ToolCallText, ...ToolCallText[]] } | { reason: string };

export interface ToolCallPayloadOptions {
  /** A JSON list of calls is allowed (smollm2); else exactly one object. */
  list?: boolean;
  /** The key the arguments are written under: 'parameters' (llama3) also accepts 'arguments'. */
  argumentsKey?: 'arguments' | 'parameters';
}

/** The calls one payload holds, or why it holds none. Never throws. */
export function readToolCallPayload(
  json: string,
  { list = false, argumentsKey = 'arguments' }: ToolCallPayloadOptions = {},
): ToolCallPayload {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { reason: toolCallErrors.json };
  }
  const items = list && Array.isArray(value) ? value : [value];
  const calls: ToolCallText[] = [];
  for (const item of items) {
    const call = toolCallOf(item, argumentsKey);
    if (call === undefined) return { reason: toolCallErrors.shape };
    calls.push(call);
  }
  const [first, ...rest] = calls;
  return first === undefined ? { reason: toolCallErrors.shape } : { calls: [first, ...rest] };
}

function toolCallOf(value: unknown, argumentsKey: 'arguments' | 'parameters'): ToolCallText | undefined {
  if (!isPlainObject(value)) return undefined;
  const name = value.name;
  if (typeof name !== 'string' || name.trim() === '') return undefined;
  const args = argumentsKey === 'parameters' && value.parameters !== undefined ? value.parameters : value.arguments;
  if (args !== undefined && !isPlainObject(args)) return undefined;
  return { name: name.trim(), arguments: args ?? {} };
}

export const toolCallOpen = '<tool_call>';
export const toolCallClose = '</tool_call>';

export interface ToolCallBlock {
  /** The text between `<tool_call>` and `</tool_call>`. */
  inner: string;
  /** The whole block, with the newline after it when `newlineAfter` took it. */
  text: string;
}

/**
 * `text` with every closed `<tool_call>` block for which `read` returns true taken out (a block
 * `read` refuses stays as it was). `newlineAfter`: a `\n` right after a block belongs to it.
 */
export function replaceToolCallBlocks(
  text: string,
  read: (block: ToolCallBlock) => boolean,
  { newlineAfter = false }: { newlineAfter?: boolean } = {},
): string {
  let content = '';
  let cursor = 0;
  for (;;) {
    const open = text.indexOf(toolCallOpen, cursor);
    if (open < 0) break;
    const close = text.indexOf(toolCallClose, open + toolCallOpen.length);
    if (close < 0) break; // no block closes after this tag, nor after any later one
    let end = close + toolCallClose.length;
    if (newlineAfter && text.startsWith('\n', end)) end += 1;
    const block = { inner: text.slice(open + toolCallOpen.length, close), text: text.slice(open, end) };
    content += text.slice(cursor, open) + (read(block) ? '' : block.text);
    cursor = end;
  }
  return content + text.slice(cursor);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
