/**
 * Declaring and running tools (STYLE.md §4).
 *
 * `tool({ name, description, inputSchema, execute })`: declares a `Tool` whose `execute` takes the
 * zod schema's output type, inferred — the input is never typed by hand, and a wrong property is a
 * compile error (as the AI SDK's `tool()`). It returns the definition unchanged.
 *
 *   const search = tool({
 *     name: 'search',
 *     description: 'BM25 search over the corpus.',
 *     inputSchema: z.strictObject({ query: z.string().min(1) }),
 *     execute: ({ query }) => retrieve(query),        // query: string
 *   });
 *
 * `runTool(tools, call)`: the one way a tool call runs — in the envs, the scaffolds and the MCP
 * server. The arguments are checked with the tool's zod schema and the tool runs; an unknown tool,
 * invalid arguments or a throwing tool come back as a failure whose `error` is the text the model
 * sees (each caller decides what a failure costs), never as an exception:
 *
 *   unknown tool "abacus"; allowed: calculator
 *   invalid arguments for calculator: expression: Invalid input: expected string, received number
 *   error: unexpected end; allowed: integers, + - * ( )          (the tool's own message)
 */
import type { z } from 'zod';
import type { Tool } from './types.ts';

export function tool<Input, Output>(definition: {
  name: string;
  description: string;
  /** Parses the call's arguments; its output type is `execute`'s input. */
  inputSchema: z.ZodType<Input>;
  execute(input: Input): Promise<Output> | Output;
}): Tool<Input, Output> {
  return definition;
}

/** Why a tool call did not give a result. */
export type ToolFailureKind = 'unknown-tool' | 'invalid-arguments' | 'tool-error';

/** The outcome of `runTool`: the tool's output (and its text), or why there is none. */
export type ToolRun =
  | { ok: true; tool: string; output: unknown; text: string }
  | { ok: false; tool: string; kind: ToolFailureKind; error: string };

/** Longest tool name quoted in an unknown-tool error, and longest argument problems listed. */
const maxQuotedName = 40;
const maxProblemChars = 200;

/** Runs `call` with the tool of its name from `tools`. Never throws (a schema that throws counts as the tool throwing). */
export async function runTool(tools: readonly Tool[], call: { name: string; arguments: unknown }): Promise<ToolRun> {
  const { name } = call;
  const found = tools.find((candidate) => candidate.name === name);
  if (found === undefined) {
    const allowed = tools.map((candidate) => candidate.name).join(', ') || 'none';
    return {
      ok: false,
      tool: name,
      kind: 'unknown-tool',
      error: `unknown tool "${clipText(name, maxQuotedName)}"; allowed: ${allowed}`,
    };
  }
  try {
    const parsed = found.inputSchema.safeParse(call.arguments);
    if (!parsed.success)
      return {
        ok: false,
        tool: name,
        kind: 'invalid-arguments',
        error: `invalid arguments for ${name}: ${argumentProblems(parsed.error)}`,
      };
    const output: unknown = await found.execute(parsed.data);
    return { ok: true, tool: name, output, text: toolOutputText(output) };
  } catch (error) {
    return { ok: false, tool: name, kind: 'tool-error', error: `error: ${thrownMessage(error)}` };
  }
}

/** Every problem of a failed parse as `path: message` ("input" for the whole), clipped. */
function argumentProblems(error: z.ZodError): string {
  const problems = error.issues.map(
    (issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'input'}: ${issue.message}`,
  );
  return clipText(problems.join('; '), maxProblemChars);
}

/** What was thrown, as text (even a value whose conversion throws). */
function thrownMessage(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return `a thrown ${Object.prototype.toString.call(error)} that cannot be printed`;
  }
}

/** A tool's output as text: a string as it is, anything else as JSON. */
export function toolOutputText(output: unknown): string {
  return typeof output === 'string' ? output : (JSON.stringify(output) ?? String(output));
}

/** Cuts text to `max` characters, marking the cut with "…". */
export function clipText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
