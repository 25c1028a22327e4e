/**
 * Writes a tokenizer folder as a hosted-Tinker user downloads one (tokenizer.json,
 * tokenizer_config.json with the chat template, generation_config.json; no weights, no
 * config.json): the tiny ChatML tokenizer (264 ids, within the check model's 272), so README's
 * hosted recipe runs as written — its `--tokenizer ./Qwen3-4B-Instruct-2507` — against the strict
 * server, which serves the hub name with SkyRL's tiny model (`--serve-as`).
 *
 *   node --import tsx scripts/check-tinker/write-tokenizer.ts <out-dir>
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tinyChatmlFiles } from '../../src/chat/tiny-chatml.ts';

const out = process.argv[2];
if (out === undefined) {
  process.stderr.write('usage: write-tokenizer.ts <out-dir>\n');
  process.exit(2);
}
const files = tinyChatmlFiles();
await mkdir(out, { recursive: true });
await writeFile(join(out, 'tokenizer.json'), JSON.stringify(files.tokenizerJson));
await writeFile(join(out, 'tokenizer_config.json'), JSON.stringify(files.tokenizerConfig));
await writeFile(join(out, 'generation_config.json'), JSON.stringify(files.generationConfig));
process.stdout.write(
  `wrote ${out}: the tiny ChatML tokenizer (tokenizer.json, tokenizer_config.json, generation_config.json)\n`,
);
