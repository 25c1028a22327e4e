/**
 * Writes what check.py compares against transformers:
 *   <out>/model/       a tiny random-weight model exported by agentrl (`exportHuggingFace`)
 *   <out>/cases.json   conversations with agentrl's token ids (serve-policy's path: toMessages →
 *                      withToolsPrompt → renderChat / renderGenerationPrompt), texts with
 *                      agentrl's encode, id lists with agentrl's decode
 *
 *   node --import tsx scripts/interop/hf/write-fixtures.ts <out-dir>
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../../../src/core/rng.ts';
import { renderChat, renderGenerationPrompt } from '../../../src/chat/chat-template.ts';
import { saveCheckpoint } from '../../../src/model/checkpoint.ts';
import { modelConfigSchema } from '../../../src/model/config.ts';
import { initHostParams } from '../../../src/model/params.ts';
import { byteTokenizer } from '../../../src/chat/tokenizer.ts';
import { exportHuggingFace } from '../../../src/serve/export-hf.ts';
import { chatRequestSchema, toMessages } from '../../../src/serve/openai/protocol.ts';
import { withToolsPrompt } from '../../../src/serve/openai/tool-format.ts';
import { chatCases, tokenizerTexts, type ChatCase } from './chat-cases.ts';

const out = process.argv[2];
if (out === undefined) {
  process.stderr.write('usage: write-fixtures.ts <out-dir>\n');
  process.exit(2);
}

const config = modelConfigSchema.parse({
  vocabSize: 272,
  hiddenSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 64,
  maxSeqLen: 512,
});
const scratch = await mkdtemp(join(tmpdir(), 'agentrl-hf-fixtures-'));
try {
  await saveCheckpoint(join(scratch, 'checkpoint'), { config, params: initHostParams(config, 1) });
  await exportHuggingFace(join(scratch, 'checkpoint'), join(out, 'model'), { name: 'agentrl-tiny' });
} finally {
  await rm(scratch, { recursive: true, force: true });
}

const tokenizer = byteTokenizer;

function render(chatCase: ChatCase): { ids: number[] } | { error: string } {
  try {
    const request = chatRequestSchema.parse({
      model: 'agentrl-tiny',
      messages: chatCase.messages,
      tools: chatCase.tools,
    });
    const messages = withToolsPrompt(toMessages(request.messages), request.tools ?? []);
    const rendered = chatCase.addGenerationPrompt
      ? renderGenerationPrompt(messages, { tokenizer })
      : renderChat(messages, { tokenizer });
    return { ids: rendered.tokens };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const rng = new Rng(7);
const idLists: number[][] = [];
for (let i = 0; i < 200; i++)
  idLists.push(
    Array.from({ length: rng.int(16) }, () =>
      rng.int(6) === 0 ? 256 + rng.int(tokenizer.vocabSize - 256) : rng.int(256),
    ),
  );

const fixtures = {
  tokenizer: { vocabSize: tokenizer.vocabSize, specialTokens: tokenizer.specialTokens },
  chats: chatCases().map((chatCase) => ({ ...chatCase, agentrl: render(chatCase) })),
  encode: tokenizerTexts().map((text) => ({ text, ids: tokenizer.encode(text) })),
  decode: idLists.map((ids) => ({
    ids,
    text: tokenizer.decode(ids),
    textSkippingSpecial: tokenizer.decode(ids, { skipSpecialTokens: true }),
  })),
};
await writeFile(join(out, 'cases.json'), JSON.stringify(fixtures));
process.stdout.write(
  `wrote ${join(out, 'model')} and ${fixtures.chats.length} conversations, ${fixtures.encode.length} texts, ${fixtures.decode.length} id lists\n`,
);
