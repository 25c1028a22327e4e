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
 * training. Parsing is lenient about whitespace; a block whose JSON is malformed stays in the
 * content and is listed in `invalid` (the agent shows it to the model as a format error).
 */
import type { ToolCall } from '../core/types.ts';
import { UnknownNameError } from '../core/errors.ts';

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
export function formatToolCalls(family: ToolCallFamily, calls: readonly Pick<ToolCall, 'name' | 'arguments'>[]): string {
  if (calls.length === 0) return '';
  if (family === 'smollm2') return `<tool_call>${pythonJson(calls.map((call) => ({ name: call.name, arguments: call.arguments })))}</tool_call>`;
  if (family === 'qwen') return calls.map((call) => `<tool_call>\n${pythonJson({ name: call.name, arguments: call.arguments })}\n</tool_call>`).join('\n');
  return calls.map((call) => pythonJson({ name: call.name, parameters: call.arguments })).join('; ');
}

/** Splits generated text into content and tool calls, in the family's format. */
export function parseToolCalls(family: ToolCallFamily, text: string, { idPrefix = 'call_' }: { idPrefix?: string } = {}): ParsedAssistantText {
  const toolCalls: ToolCall[] = [];
  const invalid: string[] = [];
  const add = (value: unknown, argumentsKey: 'arguments' | 'parameters'): boolean => {
    if (!isObject(value) || typeof value.name !== 'string') return false;
    const args = value[argumentsKey] ?? value.arguments ?? {};
    if (!isObject(args)) return false;
    toolCalls.push({ id: `${idPrefix}${toolCalls.length}`, name: value.name, arguments: args });
    return true;
  };
  if (family === 'llama3') {
    const body = text.replace(/^\s*<\|python_tag\|>/, '').trim();
    if (!body.startsWith('{')) return { content: text, toolCalls, invalid };
    const parts = body.split(/\}\s*;\s*\{/).map((part, i, all) => (all.length === 1 ? part : `${i > 0 ? '{' : ''}${part}${i < all.length - 1 ? '}' : ''}`));
    const values = parts.map(parseJson);
    if (values.every((value) => add(value, 'parameters'))) return { content: '', toolCalls, invalid };
    toolCalls.length = 0;
    return { content: text, toolCalls, invalid: [text] };
  }
  const content = text.replace(/<tool_call>([\s\S]*?)<\/tool_call>\n?/g, (block: string, json: string) => {
    const value = parseJson(json);
    const values = family === 'smollm2' && Array.isArray(value) ? value : [value];
    const before = toolCalls.length;
    if (values.length > 0 && values.every((item) => add(item, 'arguments'))) return '';
    toolCalls.length = before;
    invalid.push(block);
    return block;
  });
  return { content: content.trimEnd(), toolCalls, invalid };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
