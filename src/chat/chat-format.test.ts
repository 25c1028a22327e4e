import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadChatFormat } from './model-folder.ts';
import { loadTokenizerJson } from './tokenizer-json.ts';
import { tinyTokenizerJson } from './tiny-chatml.ts';
import { formatToolCalls, parseToolCalls } from './tool-call-format.ts';

const chatml =
  "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are helpful.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

function withModelFolder(run: (folder: string) => void): void {
  const folder = mkdtempSync(join(tmpdir(), 'agentrl-chat-'));
  try {
    writeFileSync(join(folder, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
    writeFileSync(
      join(folder, 'tokenizer_config.json'),
      JSON.stringify({
        bos_token: '<|im_start|>',
        eos_token: '<|im_end|>',
        pad_token: '<|im_end|>',
        chat_template: chatml,
      }),
    );
    writeFileSync(join(folder, 'generation_config.json'), JSON.stringify({ eos_token_id: 2 }));
    run(folder);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

test('tokenizer.json: a (?i:…) split pattern compiles on Node 20, special-token text is parsed as HF does, decode round-trips', () => {
  const tokenizer = loadTokenizerJson(tinyTokenizerJson(), { tokenizerConfig: { eos_token: '<|im_end|>' } });
  const byte = (text: string) => [...new TextEncoder().encode(text)].map((b) => b + 3);
  assert.deepEqual(tokenizer.encode("I'M ok<|im_end|>"), [...byte("I'M ok"), 2]);
  assert.deepEqual(tokenizer.encode('日本'), byte('日本'));
  for (const text of ['héllo\r\n\tworld 123456', "DON'T 😀 مرحبا", ''])
    assert.equal(tokenizer.decode(tokenizer.encode(text)), text);
  assert.equal(tokenizer.decode([1, ...byte('a'), 2], { skipSpecialTokens: true }), 'a');
  assert.deepEqual(tokenizer.tokenBytes('a'.charCodeAt(0) + 3), Uint8Array.of(97));
  assert.equal(tokenizer.tokenBytes(2), undefined);
  assert.equal(tokenizer.specialTokens.end, 2);
});

test('the model folder chat template renders the hand-written ChatML text, with an assistant mask on each reply and its <|im_end|>', () => {
  withModelFolder((folder) => {
    const format = loadChatFormat(folder);
    const messages = [
      { role: 'user' as const, content: 'Hi' },
      { role: 'assistant' as const, content: 'Hello' },
      { role: 'user' as const, content: 'Add 1 and 2' },
    ];
    const rendered = format.render(messages, { addGenerationPrompt: true });
    const expected =
      '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n<|im_start|>user\nAdd 1 and 2<|im_end|>\n<|im_start|>assistant\n';
    assert.equal(format.tokenizer.decode(rendered.tokens), expected);
    assert.deepEqual(rendered.tokens, format.tokenizer.encode(expected));
    const masked = rendered.tokens.filter((_, i) => rendered.assistantMask[i] === 1);
    assert.equal(format.tokenizer.decode(masked), 'Hello<|im_end|>');
    assert.deepEqual(format.stopTokens, [2]);
    assert.equal(format.tokenizer.decode([...format.turnEnd]), '<|im_end|>\n');
    assert.equal(
      format.tokenizer.decode(format.userTurn('next')),
      '<|im_start|>user\nnext<|im_end|>\n<|im_start|>assistant\n',
    );
  });
});

test('a template without tool support gets tools as a system message and tool calls in the smollm2 format, which parse back', () => {
  withModelFolder((folder) => {
    const format = loadChatFormat(folder);
    const tools = [
      {
        function: {
          name: 'add',
          description: 'Adds',
          parameters: { type: 'object', properties: { a: { type: 'number' } } },
        },
      },
    ];
    const call = { id: 'call_0', name: 'add', arguments: { a: 1, b: 2 } };
    const text = format.tokenizer.decode(
      format.render(
        [
          { role: 'user', content: 'Go' },
          { role: 'assistant', content: '', toolCalls: [call] },
        ],
        { tools },
      ).tokens,
    );
    assert.ok(
      text.startsWith(
        '<|im_start|>system\nYou can call these tools:\n<tools>\n{"name": "add", "description": "Adds", "parameters": {"type": "object", "properties": {"a": {"type": "number"}}}}\n</tools>\n',
      ),
      text,
    );
    assert.ok(
      text.endsWith(
        '<|im_start|>assistant\n<tool_call>[{"name": "add", "arguments": {"a": 1, "b": 2}}]</tool_call><|im_end|>\n',
      ),
      text,
    );
    assert.deepEqual(
      format.parseAssistant('<tool_call>[{"name": "add", "arguments": {"a": 1, "b": 2}}]</tool_call>').toolCalls,
      [call],
    );
  });
});

test('tool calls parse in each family format; malformed JSON stays in the content as invalid', () => {
  const calls = [
    { name: 'add', arguments: { a: 1 } },
    { name: 'mul', arguments: { b: 2 } },
  ];
  for (const family of ['smollm2', 'qwen', 'llama3'] as const) {
    const parsed = parseToolCalls(family, formatToolCalls(family, calls));
    assert.deepEqual(
      parsed.toolCalls.map(({ name, arguments: args }) => ({ name, arguments: args })),
      calls,
      family,
    );
    assert.equal(parsed.content, '', family);
  }
  assert.equal(
    formatToolCalls('qwen', calls.slice(0, 1)),
    '<tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>',
  );
  assert.deepEqual(
    parseToolCalls('llama3', '<|python_tag|>{"name": "add", "parameters": {"a": 1}}').toolCalls[0]?.arguments,
    { a: 1 },
  );
  const broken = parseToolCalls('qwen', 'x<tool_call>{"name": </tool_call>');
  assert.deepEqual(broken.toolCalls, []);
  assert.equal(broken.invalid.length, 1);
});
