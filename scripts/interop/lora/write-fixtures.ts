/**
 * check:lora, the agentrl side: a tiny model with LoRA adapters trained a few steps, written as
 *   <out>/base     the frozen base, by `export-hf` (a transformers folder)
 *   <out>/adapter  the adapters, by `saveAdapter` (PEFT's layout)
 *   <out>/merged   the merged weights (W + α/r·A B), by `export-hf` of the policy's checkpoint
 *   <out>/expected.json  tokens and agentrl's LoRA logits [B, T, V] for them
 * check.py loads base + adapter with PEFT, and merged alone, and compares their logits.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Rng } from '../../../src/core/rng.ts';
import type { TokenLoss } from '../../../src/core/loss.ts';
import { TransformerModel } from '../../../src/engine/transformer-model.ts';
import { saveCheckpoint } from '../../../src/model/checkpoint.ts';
import { loraConfigSchema } from '../../../src/model/lora.ts';
import { engineLogits } from '../engine-logits.ts';
import { exportHuggingFace } from '../../../src/serve/export-hf.ts';
import { at } from '../../../src/core/indexing.ts';

const out = process.argv[2];
if (out === undefined) throw new TypeError('usage: write-fixtures.ts <out-folder>');
const config = {
  vocabSize: 300,
  hiddenSize: 32,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  intermediateSize: 64,
  maxSeqLen: 64,
  initStd: 0.1,
  rmsNormEps: 1e-5,
};
const lora = { rank: 4, alpha: 8 };
const model = await TransformerModel.create(config, { seed: 7, lora });
const rng = new Rng(11);
const batch = Array.from({ length: 4 }, () => Array.from({ length: 16 }, () => rng.int(263)));
const nll: TokenLoss = {
  name: 'negative-log-likelihood',
  dependsOnCurrent: false,
  compute: ({ logprobs }) => ({
    loss: 0,
    gradLogprobs: logprobs.map((row) => Float32Array.from(row, (_, t) => (t === 0 ? 0 : -1))),
    metrics: {},
  }),
};
for (let step = 0; step < 5; step++) await model.trainStep(batch, nll, { learningRate: 0.03 });

const scratch = join(out, 'scratch');
await saveCheckpoint(join(scratch, 'base'), { config: model.config, params: await model.baseParams() });
await exportHuggingFace(join(scratch, 'base'), join(out, 'base'));
await saveCheckpoint(join(scratch, 'merged'), { config: model.config, params: await model.hostParams() });
await exportHuggingFace(join(scratch, 'merged'), join(out, 'merged'));
await model.saveAdapter(join(out, 'adapter'), { baseModelNameOrPath: join(out, 'base') });

// agentrl's LoRA forward (adapters unmerged), full logits for every position.
const rows = batch.length;
const length = at(batch, 0).length;
const logits = await engineLogits(model.config, await model.baseParams(), batch, {
  lora: loraConfigSchema.parse(lora),
  adapters: await model.adapterParams(),
});
await mkdir(out, { recursive: true });
await writeFile(
  join(out, 'expected.json'),
  JSON.stringify({ tokens: batch, shape: [rows, length, model.config.vocabSize], logits: Array.from(logits) }),
);
console.log(
  `wrote base, adapter (rank ${lora.rank}, alpha ${lora.alpha}), merged and agentrl's logits [${rows}, ${length}, ${model.config.vocabSize}] to ${out}`,
);
