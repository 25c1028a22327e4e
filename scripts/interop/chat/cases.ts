/**
 * check:chat, agentrl side. `cases <models> <cases.json>`: a seeded set of ≥ 2,000 strings (unicode, emoji,
 * CJK, RTL, combining marks, whitespace runs with \r\n and tabs, digit runs, contractions in mixed case,
 * code, special-token text) and of conversations (system, user, assistant, tools, tool calls, tool
 * results, multi-turn) in the shape each model's template reads. `compare <models> <cases.json> <ref.json>`:
 * agentrl's ids / decode / rendering against the Python reference; prints counts, exits 1 on any mismatch.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from '../../../src/core/rng.ts';
import type { Message } from '../../../src/core/types.ts';
import { loadChatFormat } from '../../../src/chat/model-folder.ts';
import { templateInput } from '../../../src/chat/jinja-chat-format.ts';
import { detectToolCallFamily } from '../../../src/chat/tool-call-format.ts';
import type { PromptTool } from '../../../src/chat/tools-prompt.ts';
import { at } from '../../../src/core/indexing.ts';

const pieces = [
  'hello',
  'World',
  ' the',
  "I'M",
  "you'RE",
  "it's",
  "We'Ve",
  "they'LL",
  "she'd",
  "DON'T",
  'café',
  'naïve',
  'e\u0301',
  'a\u0308\u0323',
  '日本語のテキスト',
  '中文字符',
  '한국어',
  'مرحبا بالعالم',
  'שלום',
  'Привет',
  'Ελληνικά',
  '😀',
  '👩‍👩‍👧',
  '🇫🇷',
  '∑∫√',
  '\u200b',
  '\u00a0',
  '  ',
  '   ',
  '\t',
  '\t\t',
  '\n',
  '\n\n',
  '\r\n',
  ' \r\n ',
  '12',
  '12345',
  '3.14159',
  '2026-12-01',
  '0x1F',
  'const x = (a) => a * 2;',
  'def f(x):\n    return x',
  '{"a": [1, 2]}',
  '<tool_call>',
  '</tool_call>',
  '<|im_start|>',
  '<|im_end|>',
  '<|endoftext|>',
  '<|eot_id|>',
  '<|begin_of_text|>',
  '<|start_header_id|>',
  '<|im_end',
  '<|',
  '|>',
  '!!!',
  '...',
  '—',
  '«»',
  '$%^&*',
];

function randomString(rng: Rng): string {
  const count = 1 + rng.int(8);
  let text = '';
  for (let i = 0; i < count; i++) {
    const roll = rng.int(10);
    if (roll < 6) text += at(pieces, rng.int(pieces.length));
    else if (roll < 8) text += ' '.repeat(rng.int(4)) + at(pieces, rng.int(pieces.length));
    else text += String.fromCodePoint(0x20 + rng.int(0x3000));
  }
  return text;
}

const tools: PromptTool[] = [
  {
    function: {
      name: 'add',
      description: 'Adds two numbers',
      parameters: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
    },
  },
  {
    function: {
      name: 'search',
      description: 'Searches the wiki — UTF-8 ok',
      parameters: { type: 'object', properties: { query: { type: 'string' } } },
    },
  },
];

function conversations(rng: Rng): { messages: Message[]; tools: PromptTool[]; addGenerationPrompt: boolean }[] {
  const out: { messages: Message[]; tools: PromptTool[]; addGenerationPrompt: boolean }[] = [];
  for (let c = 0; c < 60; c++) {
    const messages: Message[] = [];
    if (rng.int(2) === 0)
      messages.push({ role: 'system', content: randomString(rng).replace(/<\|[a-z_]+\|>/g, '') || 'Be brief.' });
    const turns = 1 + rng.int(3);
    const withTools = c % 2 === 0;
    for (let t = 0; t < turns; t++) {
      messages.push({ role: 'user', content: `question ${t}: ${randomString(rng).replace(/<\|[a-z_]+\|>/g, '')}` });
      if (withTools && rng.int(2) === 0) {
        const id = `call_${c}_${t}`;
        messages.push({
          role: 'assistant',
          content: rng.int(2) === 0 ? '' : 'Let me compute.',
          toolCalls: [{ id, name: 'add', arguments: { a: rng.int(100), b: rng.int(100) } }],
        });
        messages.push({ role: 'tool', content: String(rng.int(200)), toolCallId: id, name: 'add' });
      }
      if (t < turns - 1 || rng.int(2) === 0)
        messages.push({
          role: 'assistant',
          content: `answer ${t}: ${randomString(rng).replace(/<\|[a-z_]+\|>/g, '')}`,
        });
    }
    const last = at(messages, messages.length - 1);
    out.push({ messages, tools: withTools ? tools : [], addGenerationPrompt: last.role !== 'assistant' });
  }
  return out;
}

const [mode, models, casesFile, referenceFile] = process.argv.slice(2) as [string, string, string, string?];
const names = readdirSync(models).sort();
if (mode === 'cases') {
  const rng = new Rng(16);
  const strings = Array.from({ length: 2400 }, () => randomString(rng));
  const byModel: Record<string, unknown[]> = {};
  const agentrl: Record<string, unknown[]> = {};
  for (const name of names) {
    const template = loadChatFormatSource(join(models, name));
    const flags = {
      readsToolCalls: template.includes('tool_calls'),
      readsTools: /\btools\b/.test(template),
      family: detectToolCallFamily(template),
    };
    const chats = conversations(new Rng(1600 + names.indexOf(name)));
    // The Llama-3 (8B-Instruct) template renders no tool roles: its conversations keep user/assistant/system.
    const usable = name.startsWith('llama3')
      ? chats.map((chat) => ({
          ...chat,
          tools: [],
          messages: chat.messages.filter((m) => m.role !== 'tool' && !m.toolCalls?.length),
        }))
      : chats;
    agentrl[name] = usable;
    byModel[name] = usable.map((chat) => ({
      ...templateInput(chat.messages, chat.tools, flags),
      addGenerationPrompt: chat.addGenerationPrompt,
    }));
  }
  writeFileSync(casesFile, JSON.stringify({ strings, conversations: byModel, agentrl }));
  console.log(
    `== ${strings.length} strings, ${Object.values(byModel).reduce((n, list) => n + list.length, 0)} conversations over ${names.join(', ')}`,
  );
} else {
  const cases = JSON.parse(readFileSync(casesFile, 'utf8'));
  const reference = JSON.parse(readFileSync(referenceFile!, 'utf8'));
  let failures = 0;
  for (const name of names) {
    const format = loadChatFormat(join(models, name));
    const ref = reference[name];
    let encodeEqual = 0,
      decodeEqual = 0,
      chatEqual = 0,
      maskConsistent = 0;
    const strings: string[] = cases.strings;
    strings.forEach((text, i) => {
      const ids = format.tokenizer.encode(text);
      if (JSON.stringify(ids) === JSON.stringify(ref.ids[i])) encodeEqual++;
      else if (failures++ < 10)
        console.log(
          `  ${name} encode mismatch on ${JSON.stringify(text)}: ${JSON.stringify(ids)} vs ${JSON.stringify(ref.ids[i])}`,
        );
      if (format.tokenizer.decode(ref.ids[i]) === ref.decoded[i]) decodeEqual++;
      else if (failures++ < 10) console.log(`  ${name} decode mismatch on ${JSON.stringify(text)}`);
    });
    const chats: { messages: Message[]; tools: PromptTool[]; addGenerationPrompt: boolean }[] = cases.agentrl[name];
    chats.forEach((chat, i) => {
      const rendered = format.render(chat.messages, {
        tools: chat.tools,
        addGenerationPrompt: chat.addGenerationPrompt,
      });
      if (JSON.stringify(rendered.tokens) === JSON.stringify(ref.chats[i])) chatEqual++;
      else if (failures++ < 10)
        console.log(
          `  ${name} template mismatch on conversation ${i}:\n    agentrl ${JSON.stringify(format.tokenizer.decode(rendered.tokens))}\n    hf      ${JSON.stringify(format.tokenizer.decode(ref.chats[i]))}`,
        );
      // Mask consistency: one masked run per assistant reply, ending in a stop token, holding the reply's
      // text (as the tokenizer normalizes it: Qwen2 applies NFC).
      const runs: number[][] = [];
      rendered.assistantMask.forEach((bit, t) => {
        if (bit === 1 && rendered.assistantMask[t - 1] !== 1) runs.push([]);
        if (bit === 1) runs.at(-1)!.push(at(rendered.tokens, t));
      });
      const replies = chat.messages.filter((m) => m.role === 'assistant');
      const consistent =
        runs.length === replies.length &&
        runs.every(
          (run, r) =>
            format.stopTokens.includes(run.at(-1)!) &&
            format.tokenizer
              .decode(run.slice(0, -1))
              .includes(format.tokenizer.decode(format.tokenizer.encode(at(replies, r).content.trim()))),
        );
      if (consistent) maskConsistent++;
      else if (failures++ < 10) console.log(`  ${name} mask inconsistent on conversation ${i}`);
    });
    console.log(
      `== ${name}: encode ${encodeEqual}/${strings.length} equal, decode ${decodeEqual}/${strings.length} equal, template ${chatEqual}/${chats.length} token-identical, assistant masks ${maskConsistent}/${chats.length} consistent`,
    );
  }
  console.log(`== check:chat ${failures === 0 ? 'passed' : `FAILED (${failures} mismatches)`}`);
  process.exit(failures === 0 ? 0 : 1);
}

function loadChatFormatSource(folder: string): string {
  return JSON.parse(readFileSync(join(folder, 'tokenizer_config.json'), 'utf8')).chat_template as string;
}
