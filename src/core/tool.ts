/**
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
