/**
 * Running a tool call for the scaffolds (STYLE.md §4): the arguments are checked with the tool's
 * zod schema and the tool runs; an unknown tool, invalid arguments or a throwing tool become an
 * error text the model sees as its observation — never a crash.
 */
import type { Tool } from '../core/types.ts';
import { toolSchema } from '../policy/openai-wire.ts';
import { clip } from './transcript.ts';

export type ToolOutcome =
  | { ok: true; output: string }
  | { ok: false; error: string; kind: 'unknown-tool' | 'invalid-arguments' | 'tool-error' };

export async function callTool(tools: readonly Tool[], name: string, input: unknown): Promise<ToolOutcome> {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) {
    const known = tools.map((candidate) => candidate.name).join(', ') || '(none)';
    return { ok: false, kind: 'unknown-tool', error: `Error: unknown tool "${clip(name, 60)}"; available: ${known}` };
  }
  const parsed = tool.inputSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'input'}: ${issue.message}`).join('; ');
    return { ok: false, kind: 'invalid-arguments', error: `Error: invalid arguments for ${name}: ${problems}` };
  }
  try {
    const output = await tool.execute(parsed.data);
    return { ok: true, output: typeof output === 'string' ? output : JSON.stringify(output) };
  } catch (error) {
    return { ok: false, kind: 'tool-error', error: `Error: ${name} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * The tools as one line each, `name(arg: type, …): description` (a short context: small models,
 * byte-level tokens), with how to call them: `callExample`, a call written in the policy's chat
 * format (`toolCallExample`); default agentrl's `<tool_call>{"name": "<function>", …}</tool_call>`.
 */
export function listTools(tools: readonly Tool[], { callExample = '<tool_call>{"name": "<function>", "arguments": {...}}</tool_call>' }: { callExample?: string } = {}): string {
  const lines = tools.map((tool) => {
    const { properties = {}, required = [] } = toolSchema(tool).function.parameters as { properties?: Record<string, JsonSchema>; required?: string[] };
    const args = Object.entries(properties).map(([name, schema]) => `${name}${required.includes(name) ? '' : '?'}: ${typeName(schema)}`);
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
  return ['You can call these tools:', '<tools>', ...lines, '</tools>', 'To call a tool, reply with <tool_call>{"name": "<tool name>", "arguments": {...}}</tool_call>.'].join('\n');
}
