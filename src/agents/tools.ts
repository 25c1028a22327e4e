/**
 * Running a tool call for the scaffolds (STYLE.md §4), through `runTool` (core/tool.ts): the
 * arguments are checked with the tool's zod schema and the tool runs; an unknown tool, invalid
 * arguments or a throwing tool become an error text the model sees as its observation — never a
 * crash — worded as everywhere else (`unknown tool "x"; allowed: …`, `invalid arguments for x: …`,
 * `error: <the tool's message>`).
 */
import { runTool, type ToolFailureKind } from '../core/tool.ts';
import type { Tool } from '../core/types.ts';
import { toolSchema } from '../policy/openai-wire.ts';

export type ToolOutcome = { ok: true; output: string } | { ok: false; error: string; kind: ToolFailureKind };

export async function callTool(tools: readonly Tool[], name: string, input: unknown): Promise<ToolOutcome> {
  const run = await runTool(tools, { name, arguments: input });
  return run.ok ? { ok: true, output: run.text } : { ok: false, error: run.error, kind: run.kind };
}

/**
 * The tools as one line each, `name(arg: type, …): description` (a short context: small models,
 * byte-level tokens), with how to call them: `callExample`, a call written in the policy's chat
 * format (`toolCallExample`); default agentrl's `<tool_call>{"name": "<function>", …}</tool_call>`.
 */
export function listTools(
  tools: readonly Tool[],
  { callExample = '<tool_call>{"name": "<function>", "arguments": {...}}</tool_call>' }: { callExample?: string } = {},
): string {
  const lines = tools.map((tool) => {
    const { properties = {}, required = [] } = toolSchema(tool).function.parameters as {
      properties?: Record<string, JsonSchema>;
      required?: string[];
    };
    const args = Object.entries(properties).map(
      ([name, schema]) => `${name}${required.includes(name) ? '' : '?'}: ${typeName(schema)}`,
    );
    return `- ${tool.name}(${args.join(', ')}): ${tool.description}`;
  });
  return ['Functions:', ...lines, `To call a function, reply with ${callExample}.`].join('\n');
}

interface JsonSchema {
  type?: string;
  enum?: unknown[];
}

function typeName(schema: JsonSchema): string {
  if (schema.enum !== undefined) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  return schema.type ?? 'any';
}

/** The tools as a system-prompt block (JSON-schema functions) with how to call them. */
export function describeTools(tools: readonly Tool[]): string {
  const lines = tools.map((tool) => JSON.stringify(toolSchema(tool).function));
  return [
    'You can call these tools:',
    '<tools>',
    ...lines,
    '</tools>',
    'To call a tool, reply with <tool_call>{"name": "<tool name>", "arguments": {...}}</tool_call>.',
  ].join('\n');
}
