import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readToolCallPayload, replaceToolCallBlocks, toolCallErrors } from './tool-call-payload.ts';
import { parseToolCalls, toolCallFamilies } from './tool-call-format.ts';

test('readToolCallPayload: one call, a list where allowed, else the reason in the one wording', () => {
  assert.deepEqual(readToolCallPayload('{"name": " add ", "arguments": {"a": 1}}'), {
    calls: [{ name: 'add', arguments: { a: 1 } }],
  });
  assert.deepEqual(readToolCallPayload('{"name": "now"}'), { calls: [{ name: 'now', arguments: {} }] });
  assert.deepEqual(readToolCallPayload('[{"name": "a"}, {"name": "b"}]', { list: true }), {
    calls: [
      { name: 'a', arguments: {} },
      { name: 'b', arguments: {} },
    ],
  });
  assert.deepEqual(readToolCallPayload('{"name": "add", "parameters": {"a": 1}}', { argumentsKey: 'parameters' }), {
    calls: [{ name: 'add', arguments: { a: 1 } }],
  });
  assert.deepEqual(readToolCallPayload('{"name": "add", "arguments": {"a": 1}}', { argumentsKey: 'parameters' }), {
    calls: [{ name: 'add', arguments: { a: 1 } }],
  });
  assert.deepEqual(readToolCallPayload('{oops'), { reason: toolCallErrors.json });
  for (const payload of [
    '[{"name": "a"}]',
    '[]',
    '{"name": ""}',
    '{"name": "a", "arguments": null}',
    '{"name": "a", "arguments": "{}"}',
    'null',
  ]) {
    assert.deepEqual(readToolCallPayload(payload), { reason: toolCallErrors.shape }, payload);
  }
  assert.deepEqual(readToolCallPayload('[]', { list: true }), { reason: toolCallErrors.shape });
});

test('replaceToolCallBlocks: takes out the blocks read, keeps the rest and anything unclosed as it was', () => {
  const seen: string[] = [];
  const content = replaceToolCallBlocks(
    'a<tool_call>x</tool_call>\nb<tool_call>y</tool_call>c<tool_call>z',
    (block) => {
      seen.push(block.inner);
      return block.inner === 'x';
    },
  );
  assert.deepEqual(seen, ['x', 'y']);
  assert.equal(content, 'a\nb<tool_call>y</tool_call>c<tool_call>z');
  assert.equal(
    replaceToolCallBlocks('<tool_call>x</tool_call>\nb', () => true, { newlineAfter: true }),
    'b',
  );
  assert.equal(
    replaceToolCallBlocks('<tool_call>a<tool_call>b</tool_call>', (block) => block.inner === 'a<tool_call>b'),
    '',
  );
});

test('the byte template keeps the newline after a block and trailing space; the families take both', () => {
  const text = 'Sure.<tool_call>{"name": "a"}</tool_call>\n';
  assert.equal(parseToolCalls('agentrl', text).content, 'Sure.\n');
  assert.equal(parseToolCalls('qwen', text).content, 'Sure.');
  assert.equal(parseToolCalls('smollm2', text).content, 'Sure.');
  const broken = parseToolCalls('qwen', 'x<tool_call>{"name": </tool_call>\ny');
  assert.deepEqual(broken.invalid, ['<tool_call>{"name": </tool_call>\n']);
  assert.equal(broken.content, 'x<tool_call>{"name": </tool_call>\ny');
});

test('bounded work: 4 MB built to make a block scan slow reads in one pass (well under 2 s on a busy machine)', () => {
  const size = 4_000_000;
  const shapes: Array<[string, string]> = [
    ['unclosed tags', '<tool_call>'.repeat(size / 11)],
    ['one open, no close', `<tool_call>${'{"a":'.repeat(size / 5 - 5)}`],
    ['closes only', '</tool_call>'.repeat(size / 12)],
    ['many small calls', '<tool_call>{"name": "a"}</tool_call>'.repeat(size / 36)],
    ['nested-looking JSON', `<tool_call>${'{"a":'.repeat(size / 5 - 5)}</tool_call>`],
  ];
  for (const [name, text] of shapes) {
    for (const format of ['agentrl', ...toolCallFamilies] as const) {
      const started = performance.now();
      parseToolCalls(format, text);
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 2000, `${name} (${format}): ${elapsed.toFixed(0)} ms`);
    }
  }
});
