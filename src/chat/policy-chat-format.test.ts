import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChatTemplateError } from '../core/errors.ts';
import { renderGenerationPrompt } from './chat-template.ts';
import { byteTokenizer } from './tokenizer.ts';
import { jinjaChatFormat } from './jinja-chat-format.ts';
import { appendedTokens, chatFormatOf, stopTokensOf, toolCallExample, userPrompt } from './policy-chat-format.ts';
import { tinyChatmlFormat } from './tiny-chatml.ts';

test("chatFormatOf: the policy's own format when it carries one, else agentrl's byte template over its tokenizer", () => {
  const tiny = tinyChatmlFormat();
  assert.equal(chatFormatOf({ tokenizer: tiny.tokenizer, chatFormat: tiny }), tiny);
  const byte = chatFormatOf({ tokenizer: byteTokenizer });
  assert.equal(byte.name, 'agentrl');
  assert.deepEqual(userPrompt(byte, 'hi'), renderGenerationPrompt([{ role: 'user', content: 'hi' }]).tokens);
  assert.deepEqual(stopTokensOf(byte), [byteTokenizer.specialTokens.end]);
});

test("userPrompt, stopTokensOf and appendedTokens in a model's ChatML format", () => {
  const format = tinyChatmlFormat();
  const decode = (ids: readonly number[]) => format.tokenizer.decode(ids);
  assert.equal(
    decode(userPrompt(format, 'hi')),
    '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
  );
  assert.deepEqual(stopTokensOf(format), [2], '<|im_end|>');
  const before = [
    { role: 'user' as const, content: 'hi' },
    { role: 'assistant' as const, content: 'yo' },
  ];
  assert.equal(
    decode(appendedTokens(format, before, [{ role: 'tool', content: '42' }], { addGenerationPrompt: true })),
    '<|im_start|>tool\n42<|im_end|>\n<|im_start|>assistant\n',
  );
  assert.equal(decode(appendedTokens(format, before, [], { addGenerationPrompt: true })), '<|im_start|>assistant\n');
});

test('appendedTokens refuses a template that rewrites what it rendered before, naming the fix', () => {
  // Renders a tool result differently once something follows it: not prefix-stable.
  const template =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] }}{% if message['role'] == 'tool' and not loop.last %}!{% endif %}{{ '<|im_end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
  const tiny = tinyChatmlFormat();
  const format = jinjaChatFormat({
    name: 'unstable',
    tokenizer: tiny.tokenizer,
    template,
    stopTokens: [2],
    toolCallFamily: 'smollm2',
  });
  const before = [
    { role: 'user' as const, content: 'hi' },
    { role: 'tool' as const, content: '42' },
  ];
  assert.throws(
    () => appendedTokens(format, before, [{ role: 'user', content: 'next' }]),
    (error: unknown) =>
      error instanceof ChatTemplateError && /not prefix-stable/.test(error.message) && /unstable/.test(error.message),
  );
});

test("toolCallExample: agentrl's long-standing wording, a model family's own call syntax otherwise", () => {
  assert.equal(
    toolCallExample(chatFormatOf({ tokenizer: byteTokenizer })),
    '<tool_call>{"name": "<tool name>", "arguments": {...}}</tool_call>',
  );
  const example = toolCallExample(tinyChatmlFormat(), 'add');
  assert.equal(example, '<tool_call>[{"name": "add", "arguments": {"...": "..."}}]</tool_call>');
  assert.equal(
    tinyChatmlFormat().parseAssistant(example).toolCalls[0]?.name,
    'add',
    'the example parses in the format',
  );
});
