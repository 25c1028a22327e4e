/**
 * check:real `export` stage, agentrl side (reference.py `export` is the Python side).
 *
 * SmolLM2 as `agentrl train --model <model> --lora-rank 4` starts it (loadModelCheckpoint, the
 * built-in LoRA of `builtinLora`, TransformerModel.fromParams), with the adapters' B drawn from a
 * seeded normal instead of PEFT's zeros so the merge changes every adapted weight, saved by
 * BuiltinPolicy.save in its own chat format as a run's checkpoint is (merged weights + the
 * model's tokenizer files). run.sh then runs `agentrl export-hf` on it. Beside it this writes
 * what transformers must reproduce from the export folder: the merged model's logits on a few
 * prompts, the tokenizer's ids on ≥ 50 strings (special tokens included), and the rendering of a
 * conversation with system, user, assistant tool call, tool result and `tools`.
 */
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { templateInput, type TemplateMessage } from '../../../src/chat/jinja-chat-format.ts';
import { detectToolCallFamily } from '../../../src/chat/tool-call-format.ts';
import type { ChatFormat } from '../../../src/chat/chat-format.ts';
import { InvalidArgumentError } from '../../../src/core/errors.ts';
import { Rng } from '../../../src/core/rng.ts';
import type { Message } from '../../../src/core/types.ts';
import { getEnvironment } from '../../../src/envs/index.ts';
import type { HostParams } from '../../../src/model/config.ts';
import { initLoraParams, loraConfigSchema } from '../../../src/model/lora.ts';
import { TransformerModel } from '../../../src/engine/transformer-model.ts';
import { loadModelCheckpoint } from '../../../src/model/model-sources.ts';
import { toolSchema } from '../../../src/policy/openai-wire.ts';
import { BuiltinPolicy } from '../../../src/policy/builtin-policy.ts';
import { builtinLora } from '../../../src/cli/backend-setup.ts';
import { forwardLogits, paddedRows } from './forward-logits.ts';

const seed = 16;

export async function exportStage(spec: string, outDir: string, prompts: readonly string[]): Promise<void> {
  const started = Date.now();
  const base = await loadModelCheckpoint(spec);
  const chatFormat = base.chatFormat;
  if (chatFormat?.files === undefined)
    throw new InvalidArgumentError(`${spec}: no chat format of its own; the export stage needs a real model's`, {
      spec,
    });
  const lora = loraConfigSchema.parse(builtinLora({ loraRank: 4 }));
  const adapters = initLoraParams(base.config, lora, seed);
  const rng = new Rng(seed + 1);
  for (const [name, tensor] of adapters)
    if (name.endsWith('.loraB')) for (let i = 0; i < tensor.data.length; i++) tensor.data[i] = 0.02 * rng.normal();
  const model = await TransformerModel.fromParams(base.config, base.params, { lora, seed, adapters });
  const policy = new BuiltinPolicy({ model, chatFormat });
  await mkdir(outDir, { recursive: true });
  await policy.save(join(outDir, 'checkpoint'), { metadata: { check: 'check:real export', loraRank: lora.rank } });
  const merged = await model.hostParams();
  const moved = largestChange(base.params, merged);

  const ids = prompts.map((prompt) => chatFormat.tokenizer.encode(prompt));
  const { tokens, keyMask, B, T } = paddedRows(ids);
  const logits = await forwardLogits(model.config, merged, tokens, keyMask, B, T);
  await writeFile(join(outDir, 'logits.bin'), new Uint8Array(logits.buffer, logits.byteOffset, logits.byteLength));
  const strings = await tokenizerStrings(chatFormat);
  const tokenizerCases = strings.map((text) => ({ text, ids: chatFormat.tokenizer.encode(text) }));
  const chats = chatCases(chatFormat);
  await writeFile(
    join(outDir, 'agentrl.json'),
    JSON.stringify({
      prompts,
      ids,
      seqLen: T,
      vocabSize: model.config.vocabSize,
      tokenizerCases,
      chats,
      stopTokens: chatFormat.stopTokens,
    }),
  );
  console.log(
    `agentrl: ${spec} + LoRA rank ${lora.rank} on ${lora.targetModules.length} projections (B seeded, merged weights move by up to ${moved.toFixed(3)}) ` +
      `saved in the model's chat format; merged logits [${B}, ${T}, ${model.config.vocabSize}], ${tokenizerCases.length} tokenizer strings, ${chats.length} chats in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** max |merged − base| over the weights: > 0 shows the adapters change the exported model. */
function largestChange(base: HostParams, merged: HostParams): number {
  let largest = 0;
  for (const [name, tensor] of merged) {
    const original = base.get(name);
    if (original === undefined || original === tensor) continue;
    for (const [i, value] of tensor.data.entries())
      largest = Math.max(largest, Math.abs(value - (original.data[i] ?? value)));
  }
  return largest;
}

/** The model's special tokens alone and inside text, a few awkward strings, and lines of the docs: ≥ 50 in all. */
async function tokenizerStrings(chatFormat: ChatFormat): Promise<string[]> {
  const added = (chatFormat.files?.tokenizerJson.added_tokens ?? []) as { content: string }[];
  const special = added.map((token) => token.content);
  const inText = special.slice(0, 12).map((token, i) => `before ${token}after${i % 2 === 0 ? '\n' : ' '}${token}`);
  const awkward = [
    'naïve café — 東京 🚀 ',
    '  two  spaces\tand\ttabs\n\n',
    "it's I'LL we've",
    '12345678901234',
    '',
    ' ',
    '\r\n\r\n',
    'e\u0301 a\u0308',
    '<|im_end',
    '<|',
    '|>',
  ];
  const docs = (await readdir('docs')).filter((name) => name.endsWith('.md')).sort();
  const texts = await Promise.all(docs.map((name) => readFile(join('docs', name), 'utf8')));
  const lines = texts
    .flatMap((text) => text.split('\n'))
    .filter((line) => line.trim() !== '')
    .slice(0, 40);
  return [...special, ...inText, ...awkward, ...lines];
}

/** A calculator episode's conversation (system, user, assistant tool call, tool result, answer) with the env's tools, and its prompt before the answer. */
function chatCases(
  chatFormat: ChatFormat,
): { messages: TemplateMessage[]; tools: readonly object[]; addGenerationPrompt: boolean; ids: number[] }[] {
  const tools = (getEnvironment('calculator').make({}).tools ?? []).map(toolSchema);
  const template = String(chatFormat.files?.tokenizerConfig.chat_template ?? '');
  const flags = {
    readsToolCalls: template.includes('tool_calls'),
    readsTools: /\btools\b/.test(template),
    family: detectToolCallFamily(template),
  };
  const conversation: Message[] = [
    {
      role: 'system',
      content: 'Compute the integer value of the expression. Use the calculator tool, then answer with the number.',
    },
    { role: 'user', content: 'What is 17 * 23 - 4?' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'call_1', name: 'calculator', arguments: { expression: '17 * 23 - 4' } }],
    },
    { role: 'tool', content: '387', toolCallId: 'call_1', name: 'calculator' },
    { role: 'assistant', content: 'The answer is 387.' },
  ];
  return [
    { messages: conversation, addGenerationPrompt: false },
    { messages: conversation.slice(0, 4), addGenerationPrompt: true },
  ].map(({ messages, addGenerationPrompt }) => {
    // The messages as transformers' template reads them (a template that reads neither tools nor tool_calls gets them in the family's text).
    const input = templateInput(messages, tools, flags);
    return {
      messages: input.messages,
      tools: input.tools ?? tools,
      addGenerationPrompt,
      ids: chatFormat.render(messages, { tools, addGenerationPrompt }).tokens,
    };
  });
}
