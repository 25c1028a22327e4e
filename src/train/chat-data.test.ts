import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataFormatError, InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { fromOpenAiToolCall, parseChatJsonl, readChatJsonl, splitHeldOut } from './chat-data.ts';

const lines = [
  JSON.stringify({
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
    ],
  }),
  '',
  JSON.stringify({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather ' },
          { type: 'text', text: 'in Oslo?' },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', name: 'weather', content: '3 °C' },
      { role: 'assistant', content: 'It is 3 °C.' },
    ],
  }),
  '   ',
];

test('parses OpenAI chat JSONL, skipping blank lines and converting tool calls', async () => {
  const root = await mkdtemp(join(tmpdir(), 'agentrl-chat-'));
  try {
    const file = join(root, 'chat.jsonl');
    await writeFile(file, lines.join('\r\n'));
    const examples = await readChatJsonl(file);
    assert.equal(examples.length, 2);
    assert.deepEqual(at(examples, 0).messages[2], { role: 'assistant', content: 'Hello!' });
    assert.deepEqual(at(examples, 1).messages, [
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'weather', arguments: { city: 'Oslo' } }] },
      { role: 'tool', content: '3 °C', toolCallId: 'c1', name: 'weather' },
      { role: 'assistant', content: 'It is 3 °C.' },
    ]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

function assertLineError(text: string, line: number, pattern: RegExp): void {
  assert.throws(
    () => parseChatJsonl(text, { file: 'data.jsonl' }),
    (error: unknown) => {
      assert.ok(error instanceof DataFormatError);
      assert.equal(error.details.file, 'data.jsonl');
      assert.equal(error.details.line, line);
      assert.match(error.message, new RegExp(`^data\\.jsonl:${line}: `));
      assert.match(error.message, pattern);
      return true;
    },
  );
}

test('malformed lines name the file, the 1-based line and the problem', () => {
  const good = at(lines, 0);
  assertLineError(`${good}\n\n{"messages": [`, 3, /invalid JSON/);
  assertLineError(`${good}\n{"msgs": []}`, 2, /^data\.jsonl:2: messages: /);
  assertLineError(JSON.stringify({ messages: [{ role: 'robot', content: 'x' }] }), 1, /messages\.0\.role/);
  assertLineError(JSON.stringify({ messages: [{ role: 'user' }] }), 1, /messages\.0\.content: content is missing/);
  assertLineError(
    JSON.stringify({
      messages: [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{bad' } }],
        },
      ],
    }),
    1,
    /messages\.0\.tool_calls\.0\.function\.arguments: arguments are not valid JSON/,
  );
  assertLineError(
    JSON.stringify({
      messages: [
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '[1]' } }],
        },
      ],
    }),
    1,
    /must be a JSON object/,
  );
  assertLineError(
    JSON.stringify({
      messages: [
        {
          role: 'user',
          content: 'x',
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
      ],
    }),
    1,
    /only allowed on assistant messages/,
  );
  assertLineError(JSON.stringify({ messages: [] }), 1, /messages/);
});

test('fromOpenAiToolCall parses string or object arguments', () => {
  assert.deepEqual(fromOpenAiToolCall({ id: 'x', function: { name: 'f', arguments: '{"a":1}' } }), {
    id: 'x',
    name: 'f',
    arguments: { a: 1 },
  });
  assert.deepEqual(fromOpenAiToolCall({ id: 'x', function: { name: 'f', arguments: { a: 1 } } }), {
    id: 'x',
    name: 'f',
    arguments: { a: 1 },
  });
  assert.deepEqual(fromOpenAiToolCall({ id: 'x', function: { name: 'f', arguments: '' } }).arguments, {});
  assert.throws(() => fromOpenAiToolCall({ id: 'x', function: { name: 'f', arguments: 'nope' } }), DataFormatError);
});

test('splitHeldOut is seeded, disjoint, complete and order-preserving', () => {
  const items = Array.from({ length: 50 }, (_, i) => i);
  const a = splitHeldOut(items, { heldOutFraction: 0.2, seed: 1 });
  assert.deepEqual(splitHeldOut(items, { heldOutFraction: 0.2, seed: 1 }), a);
  assert.equal(a.heldOut.length, 10);
  assert.deepEqual(
    [...a.train, ...a.heldOut].sort((x, y) => x - y),
    items,
  );
  assert.deepEqual(
    a.train,
    [...a.train].sort((x, y) => x - y),
  );
  assert.notDeepEqual(splitHeldOut(items, { heldOutFraction: 0.2, seed: 2 }).heldOut, a.heldOut);
  assert.equal(splitHeldOut([1, 2, 3], { heldOutFraction: 0.1 }).heldOut.length, 1);
  assert.deepEqual(splitHeldOut([1, 2], { heldOutFraction: 0 }), { train: [1, 2], heldOut: [] });
  assert.throws(() => splitHeldOut(items, { heldOutFraction: 1 }), InvalidArgumentError);
});

test('tool-call arguments with keys such as constructor and __proto__ are ordinary keys', () => {
  const line = JSON.stringify({
    messages: [
      { role: 'user', content: 'Set it.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'set', arguments: { constructor: null, toString: 1 } } },
        ],
      },
    ],
  });
  const [example] = parseChatJsonl(line, { file: 'chat.jsonl' });
  const call = at(example?.messages ?? [], 1).toolCalls?.[0];
  assert.deepEqual(call?.arguments, { constructor: null, toString: 1 });
});
