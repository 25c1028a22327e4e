/**
 * Writes the check's base model: a random-weight Llama (2 layers, hidden 64, agentrl's byte
 * tokenizer, 272 ids) as a Hugging Face folder, through agentrl's own checkpoint writer and
 * `export-hf` — no hub download.
 *
 *   node --import tsx scripts/check-tinker/write-model.ts <out-dir>
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TransformerModel } from '../../src/engine/transformer-model.ts';
import { BuiltinPolicy } from '../../src/policy/builtin-policy.ts';
import { exportHuggingFace } from '../../src/serve/export-hf.ts';

export const checkModelConfig = {
  vocabSize: 272,
  hiddenSize: 64,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 4,
  intermediateSize: 128,
  maxSeqLen: 256,
} as const;

const out = process.argv[2];
if (out === undefined) {
  process.stderr.write('usage: write-model.ts <out-dir>\n');
  process.exit(2);
}
const scratch = await mkdtemp(join(tmpdir(), 'agentrl-tinker-model-'));
try {
  const model = await TransformerModel.create(checkModelConfig, { seed: 1 });
  await new BuiltinPolicy({ model }).save(join(scratch, 'checkpoint'));
  const result = await exportHuggingFace(join(scratch, 'checkpoint'), out, { name: 'agentrl-tiny-llama' });
  process.stdout.write(
    `wrote ${out}: ${result.architecture}, ${result.parameters} parameters (${result.files.join(', ')})\n`,
  );
} finally {
  await rm(scratch, { recursive: true, force: true });
}
