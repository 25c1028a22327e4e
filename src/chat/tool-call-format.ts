/**
 * Tool calls in a model family's own text format: how an assistant turn writes them, and how the
 * generated text is read back into `ToolCall`s.
 *
 *   family    a reply with two calls
 *   smollm2   <tool_call>[{"name": "add", "arguments": {"a": 1}}, {"name": "mul", "arguments": {"a": 2}}]</tool_call>
 *   qwen      <tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>\n<tool_call>\n{…}\n</tool_call>   (Hermes style, Qwen2.5/Qwen3)
 *   llama3    {"name": "add", "parameters": {"a": 1}}   (the whole reply; `<|python_tag|>` before it allowed; several joined by `; `)
 *
 * JSON is written as Python's `json.dumps` does (`, ` and `: `), which is what the models saw in
 * training. Parsing is lenient about whitespace; what a call's JSON must be is one rule for every
 * format (tool-call-payload.ts). A block that breaks it stays in the content and is listed in
 * `invalid` (the agent shows it to the model as a format error).
 */
import type { ToolCall } from '../core/types.ts';
import { UnknownNameError } from '../core/errors.ts';
import { readToolCallPayload, replaceToolCallBlocks, type ToolCallPayload } from './tool-call-payload.ts';

export const toolCallFamilies = ['smollm2', 'qwen', 'llama3'] as const;
export type ToolCallFamily = (typeof toolCallFamilies)[number];

export interface ParsedAssistantText {
  content: string;
  toolCalls: ToolCall[];
  invalid: string[];
}

export function checkToolCallFamily(name: string): ToolCallFamily {
  if ((toolCallFamilies as readonly string[]).includes(name)) return name as ToolCallFamily;
  throw new UnknownNameError('tool-call family', name, toolCallFamilies);
}

/** The family a chat template writes tool calls in (by the text it contains); default smollm2 for ChatML. */
export function detectToolCallFamily(template: string): ToolCallFamily {
  if (template.includes('<|start_header_id|>')) return 'llama3';
  if (/<tool_call>\\n|<tool_call>\n/.test(template)) return 'qwen';
  return 'smollm2';
}

/** Python `json.dumps(value, ensure_ascii=False)`: `, ` between items, `: ` after keys. */
export function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .map(([key, item]) => `${JSON.stringify(key)}: ${pythonJson(item)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The assistant text for `calls` in the family's format ('' for none). */
export function formatToolCalls(
  family: ToolCallFamily,
  calls: readonly Pick<ToolCall, 'name' | 'arguments'>[],
): string {
  if (calls.length === 0) return '';
  if (family === 'smollm2')
    return `<tool_call>${pythonJson(calls.map((call) => ({ name: call.name, arguments: call.arguments })))}</tool_call>`;
  if (family === 'qwen')
    return calls
      .map((call) => `<tool_call>\n${pythonJson({ name: call.name, arguments: call.arguments })}\n</tool_call>`)
      .join('\n');
  return calls.map((call) => pythonJson({ name: call.name, parameters: call.arguments })).join('; ');
}

/**
 * The text formats tool calls are read from: a family's (`ToolCallFamily`), or agentrl's byte
 * template (`agentrl`: one JSON object per block, as smollm2/qwen without their newline rules).
 */
export type ToolCallTextFormat = ToolCallFamily | 'agentrl';

/** Splits generated text into content and tool calls, in the format's own syntax (payloads read by tool-call-payload.ts). */
export function parseToolCalls(
  format: ToolCallTextFormat,
  text: string,
  { idPrefix = 'call_' }: { idPrefix?: string } = {},
): ParsedAssistantText {
  const toolCalls: ToolCall[] = [];
  const invalid: string[] = [];
  const add = (read: ToolCallPayload): boolean => {
    if (!('calls' in read)) return false;
    for (const call of read.calls)
      toolCalls.push({ id: `${idPrefix}${toolCalls.length}`, name: call.name, arguments: call.arguments });
    return true;
  };
  if (format === 'llama3') {
    const body = text.replace(/^\s*<\|python_tag\|>/, '').trim();
    if (!body.startsWith('{')) return { content: text, toolCalls, invalid };
    const parts = body
      .split(/\}\s*;\s*\{/)
      .map((part, i, all) => (all.length === 1 ? part : `${i > 0 ? '{' : ''}${part}${i < all.length - 1 ? '}' : ''}`));
    const reads = parts.map((part) => readToolCallPayload(part, { argumentsKey: 'parameters' }));
    if (reads.every((read) => 'calls' in read) && reads.every(add)) return { content: '', toolCalls, invalid };
    return { content: text, toolCalls: [], invalid: [text] };
  }
  const family = format !== 'agentrl';
  const content = replaceToolCallBlocks(
    text,
    (block) => {
      if (add(readToolCallPayload(block.inner, { list: format === 'smollm2' }))) return true;
      invalid.push(block.text);
      return false;
    },
    { newlineAfter: family },
  );
  return { content: family ? content.trimEnd() : content, toolCalls, invalid };
}
