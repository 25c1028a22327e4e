import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { runTool, tool } from './tool.ts';
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

/** The tools the runTool tests call: one that doubles (and throws on a negative), one that echoes. */
const double = tool({
  name: 'double',
  description: 'Doubles a number.',
  inputSchema: z.strictObject({ value: z.number() }),
  execute: ({ value }) => {
    if (value < 0) throw new Error('negative values are not allowed');
    return value * 2;
  },
});
const echo = tool({
  name: 'echo',
  description: 'Echoes text.',
  inputSchema: z.object({ text: z.string() }),
  execute: async ({ text }) => text,
});

describe('runTool(tools, call): one result shape, one error wording', () => {
  test('a valid call: the output and its text (a string as it is, anything else as JSON)', async () => {
    assert.deepEqual(await runTool([double, echo], { name: 'double', arguments: { value: 21 } }), {
      ok: true,
      tool: 'double',
      output: 42,
      text: '42',
    });
    assert.deepEqual(await runTool([double, echo], { name: 'echo', arguments: { text: 'hi' } }), {
      ok: true,
      tool: 'echo',
      output: 'hi',
      text: 'hi',
    });
    const object = tool({
      name: 'object',
      description: 'An object.',
      inputSchema: z.object({}),
      execute: () => ({ a: [1] }),
    });
    assert.equal(((await runTool([object], { name: 'object', arguments: {} })) as { text: string }).text, '{"a":[1]}');
  });

  test('an unknown tool names the allowed ones (none when there are none); a long name is clipped', async () => {
    assert.deepEqual(await runTool([double, echo], { name: 'search', arguments: {} }), {
      ok: false,
      tool: 'search',
      kind: 'unknown-tool',
      error: 'unknown tool "search"; allowed: double, echo',
    });
    assert.equal(
      ((await runTool([], { name: 'search', arguments: {} })) as { error: string }).error,
      'unknown tool "search"; allowed: none',
    );
    const long = (await runTool([double], { name: 'x'.repeat(100), arguments: {} })) as { error: string };
    assert.equal(long.error, `unknown tool "${'x'.repeat(39)}…"; allowed: double`);
  });
});

describe('runTool(tools, call): bad arguments and throwing tools', () => {
  test('invalid arguments list every problem by path ("input" for the whole), and the tool does not run', async () => {
    let ran = false;
    const spy = tool({
      name: 'spy',
      description: 'Records a run.',
      inputSchema: z.strictObject({ value: z.number() }),
      execute: () => (ran = true),
    });
    const bad = await runTool([spy], { name: 'spy', arguments: { value: 'x', extra: 1 } });
    assert.deepEqual(bad, {
      ok: false,
      tool: 'spy',
      kind: 'invalid-arguments',
      error:
        'invalid arguments for spy: value: Invalid input: expected number, received string; input: Unrecognized key: "extra"',
    });
    assert.equal(ran, false);
    const notObject = (await runTool([spy], { name: 'spy', arguments: 'text' })) as { error: string };
    assert.match(notObject.error, /^invalid arguments for spy: input: Invalid input: expected object/);
    const many = (await runTool([spy], {
      name: 'spy',
      arguments: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key${i}`, i])),
    })) as { error: string };
    assert.ok(
      many.error.length <= 'invalid arguments for spy: '.length + 200 && many.error.endsWith('…'),
      'the problems are clipped',
    );
  });

  test('a throwing tool is a failure with its own message; a non-Error throw is shown too', async () => {
    assert.deepEqual(await runTool([double], { name: 'double', arguments: { value: -1 } }), {
      ok: false,
      tool: 'double',
      kind: 'tool-error',
      error: 'error: negative values are not allowed',
    });
    const rude = tool({
      name: 'rude',
      description: 'Throws a string.',
      inputSchema: z.object({}),
      execute: () => Promise.reject('no'),
    });
    assert.equal(((await runTool([rude], { name: 'rude', arguments: {} })) as { error: string }).error, 'error: no');
  });
});
