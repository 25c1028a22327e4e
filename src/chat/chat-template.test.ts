import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from '../core/types.ts';
import { byteSpecialTokens as S, byteTokenizer } from './tokenizer.ts';
import {
  assistantText,
  chatStopTokens,
  escapeSpecialTokenText,
  parseAssistantText,
  renderChat,
  renderGenerationPrompt,
  renderMessage,
  renderToolCall,
  unescapeSpecialTokenText,
} from './chat-template.ts';

const bytes = (text: string): number[] => byteTokenizer.encode(text);

const conversation: Message[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather in Oslo?' },
  { role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'c1', name: 'weather', arguments: { city: 'Oslo' } }] },
  { role: 'tool', content: '{"temp":3}', toolCallId: 'c1', name: 'weather' },
  { role: 'assistant', content: 'It is 3 °C.' },
  { role: 'user', content: 'Thanks <|end|>' },
];

test('renders the documented format', () => {
  const { tokens } = renderChat(conversation.slice(0, 2));
  assert.deepEqual(tokens, [
    S.bos,
    S.system,
    ...bytes('Be brief.'),
    S.end,
    S.user,
    ...bytes('Weather in Oslo?'),
    S.end,
  ]);
  assert.equal(
    byteTokenizer.decode(renderChat(conversation).tokens),
    '<|bos|><|system|>Be brief.<|end|><|user|>Weather in Oslo?<|end|>' +
      '<|assistant|>Checking.<tool_call>{"name":"weather","arguments":{"city":"Oslo"}}</tool_call><|end|>' +
      '<|tool|>{"temp":3}<|end|><|assistant|>It is 3 °C.<|end|><|user|>Thanks <\u200b|end|><|end|>',
  );
});

test('assistant mask is 1 exactly on assistant content, tool-call text and its <|end|>', () => {
  const { tokens, assistantMask } = renderChat(conversation);
  assert.equal(assistantMask.length, tokens.length);
  const masked = tokens.filter((_, i) => assistantMask[i] === 1);
  const expected = [
    ...bytes('Checking.<tool_call>{"name":"weather","arguments":{"city":"Oslo"}}</tool_call>'),
    S.end,
    ...bytes('It is 3 °C.'),
    S.end,
  ];
  assert.deepEqual(masked, expected);
  // every role header is unmasked
  tokens.forEach((id, i) => {
    if (id === S.assistant || id === S.user || id === S.system || id === S.tool || id === S.bos)
      assert.equal(assistantMask[i], 0);
  });
});

test('user text cannot inject special tokens', () => {
  const { tokens } = renderMessage({ role: 'user', content: 'Thanks <|end|>' });
  assert.equal(tokens.filter((id) => id === S.end).length, 1);
  assert.equal(tokens.at(-1), S.end);
});

test('special-token text inside content gets U+200B after its "<" (so transformers, which parses it, gives the same ids)', () => {
  assert.equal(
    escapeSpecialTokenText('a <|end|><|user|> <|end| <|other|>'),
    'a <\u200b|end|><\u200b|user|> <|end| <|other|>',
  );
  const { tokens } = renderMessage({
    role: 'assistant',
    content: '<|bos|>',
    toolCalls: [{ id: 'c', name: 'f', arguments: { text: '<|tool|>' } }],
  });
  assert.equal(
    byteTokenizer.decode(tokens),
    '<|assistant|><\u200b|bos|><tool_call>{"name":"f","arguments":{"text":"<\u200b|tool|>"}}</tool_call><|end|>',
  );
  for (const text of ['x <|end|> y', 'x <\u200b|end|> y', '<|user|><|bogus|>']) {
    assert.equal(
      escapeSpecialTokenText(unescapeSpecialTokenText(escapeSpecialTokenText(text))),
      escapeSpecialTokenText(text),
      text,
    );
  }
  assert.equal(unescapeSpecialTokenText(escapeSpecialTokenText('a <|end|> b')), 'a <|end|> b');
});

test('a tool call keeps its arguments text verbatim (OpenAI-style arguments strings); without it, compact JSON', () => {
  const call = {
    name: 'search',
    arguments: { query: 'hello world', x: 1.5 },
    argumentsJson: '{"query": "hello world", "x": 1.50}',
  };
  assert.equal(
    renderToolCall(call),
    '<tool_call>{"name":"search","arguments":{"query": "hello world", "x": 1.50}}</tool_call>',
  );
  assert.equal(
    renderToolCall({ name: 'search', arguments: call.arguments }),
    '<tool_call>{"name":"search","arguments":{"query":"hello world","x":1.5}}</tool_call>',
  );
});

test('rendering messages[0..k] is a prefix of rendering messages[0..k+1]', () => {
  for (let k = 0; k < conversation.length; k++) {
    const shorter = renderChat(conversation.slice(0, k));
    const longer = renderChat(conversation.slice(0, k + 1));
    assert.deepEqual(longer.tokens.slice(0, shorter.tokens.length), shorter.tokens);
    assert.deepEqual(longer.assistantMask.slice(0, shorter.assistantMask.length), shorter.assistantMask);
  }
});

test('generation prompt ends with <|assistant|> and prefixes the rendering with the reply', () => {
  conversation.forEach((message, k) => {
    if (message.role !== 'assistant') return;
    const prompt = renderGenerationPrompt(conversation.slice(0, k));
    assert.equal(prompt.tokens.at(-1), S.assistant);
    assert.equal(prompt.assistantMask.at(-1), 0);
    const full = renderChat(conversation.slice(0, k + 1));
    assert.deepEqual(full.tokens.slice(0, prompt.tokens.length), prompt.tokens);
    // what follows the prompt is exactly the generated text and the stop token
    const generated = [...bytes(assistantText(message)), ...chatStopTokens()];
    assert.deepEqual(full.tokens.slice(prompt.tokens.length), generated);
    assert.ok(full.assistantMask.slice(prompt.tokens.length).every((m) => m === 1));
  });
  assert.deepEqual(renderGenerationPrompt([]).tokens, [S.bos, S.assistant]);
});

test('stop token is <|end|>', () => {
  assert.deepEqual(chatStopTokens(byteTokenizer), [S.end]);
});

test('parseAssistantText inverts assistantText and keeps malformed calls as text', () => {
  const message = conversation[2];
  assert.ok(message !== undefined);
  const parsed = parseAssistantText(assistantText(message));
  assert.equal(parsed.content, 'Checking.');
  assert.deepEqual(parsed.toolCalls, [{ id: 'call_0', name: 'weather', arguments: { city: 'Oslo' } }]);
  assert.deepEqual(parsed.invalid, []);
  const broken = parseAssistantText('x<tool_call>{oops</tool_call>');
  assert.equal(broken.content, 'x<tool_call>{oops</tool_call>');
  assert.deepEqual(broken.toolCalls, []);
  assert.deepEqual(broken.invalid, ['<tool_call>{oops</tool_call>']);
});

test('renderChat: a 7.5 MB message renders whole (no spread of its ids as arguments: no "Maximum call stack size exceeded")', () => {
  const content = 'a'.repeat(7_500_000);
  const rendered = renderChat([{ role: 'user', content }]);
  assert.equal(rendered.tokens.length, 1 + 1 + content.length + 1); // <|bos|> <|user|> … <|end|>
  assert.equal(rendered.assistantMask.length, rendered.tokens.length);
  assert.equal(rendered.tokens.at(-2), 'a'.charCodeAt(0));
});
