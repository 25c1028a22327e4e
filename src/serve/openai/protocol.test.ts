import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chatRequestSchema, toMessages } from './protocol.ts';

const parse = (messages: unknown[]) => toMessages(chatRequestSchema.parse({ model: 'm', messages }).messages);

test('toMessages: an arguments string is kept verbatim beside its parsed object (the chat template renders it as written)', () => {
  const [, assistant] = parse([
    { role: 'user', content: 'x' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c0', type: 'function', function: { name: 'f', arguments: '{"q": "a b", "x": 1.50}' } }],
    },
  ]);
  assert.deepEqual(assistant!.toolCalls, [
    { id: 'c0', name: 'f', arguments: { q: 'a b', x: 1.5 }, argumentsJson: '{"q": "a b", "x": 1.50}' },
  ]);
});

test('toMessages: an empty arguments string is {}; arguments given as an object (Hugging Face style) are accepted as they are', () => {
  const [first, second] = parse([
    { role: 'assistant', content: '', tool_calls: [{ id: 'c0', function: { name: 'f', arguments: '' } }] },
    {
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'c1', function: { name: 'g', arguments: { city: 'Oslo', nested: { constructor: 1 } } } }],
    },
  ]);
  assert.deepEqual(first!.toolCalls, [{ id: 'c0', name: 'f', arguments: {} }]);
  assert.deepEqual(second!.toolCalls, [
    { id: 'c1', name: 'g', arguments: { city: 'Oslo', nested: { constructor: 1 } } },
  ]);
});

test('toMessages: content given as text parts is joined; developer is a system message', () => {
  const messages = parse([
    {
      role: 'developer',
      content: [
        { type: 'text', text: 'a ' },
        { type: 'text', text: 'b' },
      ],
    },
    { role: 'user', content: [{ type: 'text', text: 'c' }] },
  ]);
  assert.deepEqual(messages, [
    { role: 'system', content: 'a b' },
    { role: 'user', content: 'c' },
  ]);
});
