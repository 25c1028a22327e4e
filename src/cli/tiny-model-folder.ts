/**
 * Test fixture of the `--model` CLI tests (train-model.test.ts, dpo-model.test.ts): a plain
 * Hugging Face folder (config.json without the agentrl block, model.safetensors, and the tiny
 * ChatML model's tokenizer.json / tokenizer_config.json / generation_config.json) of random weights.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tinyChatmlFiles, tinyChatmlFormat } from '../chat/tiny-chatml.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { modelConfigSchema } from '../model/config.ts';
import { initHostParams } from '../model/params.ts';

export const tinyModelConfig = modelConfigSchema.parse({
  vocabSize: 264,
  hiddenSize: 16,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 32,
  maxSeqLen: 1024,
});

/** Writes the folder at `dir` (`tokenizer: false` leaves the three tokenizer files out) and returns `dir`. */
export async function tinyModelFolder(
  dir: string,
  { tokenizer = true }: { tokenizer?: boolean } = {},
): Promise<string> {
  const files = tinyChatmlFiles();
  await saveCheckpoint(dir, {
    config: tinyModelConfig,
    params: initHostParams(tinyModelConfig, 3),
    tokenizer: tinyChatmlFormat().tokenizer,
    chatFiles: files,
  });
  const { agentrl: _agentrl, ...hfConfig } = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
  await writeFile(join(dir, 'config.json'), JSON.stringify(hfConfig));
  if (!tokenizer)
    for (const file of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) await rm(join(dir, file));
  return dir;
}
