import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { tool } from './tool.ts';
import type { Tool } from './types.ts';

test("tool(): execute's input is the schema's output type, inferred (a wrong property does not compile)", async () => {
  const lookup = tool({
    name: 'lookup',
    description: 'Looks a word up, page by page.',
    inputSchema: z.strictObject({ word: z.string(), page: z.number().int().default(1) }),
    execute: ({ word, page }) => `${word.toUpperCase()} p.${page.toFixed(0)}`,
  });
  const typed: Tool<{ word: string; page: number }, string> = lookup;
  assert.equal(await typed.execute(lookup.inputSchema.parse({ word: 'agent' })), 'AGENT p.1');

  tool({
    name: 'wrong',
    description: 'Reads a property the schema does not have.',
    inputSchema: z.strictObject({ word: z.string() }),
    // @ts-expect-error — `query` is not in the schema: the input type comes from inputSchema.
    execute: ({ query }) => query,
  });
});
