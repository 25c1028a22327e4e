/**
 * Writes what the check:python scripts compare against PyTorch / transformers / datasets:
 *   <out>/<name>/                 tiny random-weight models exported by agentrl (`exportHuggingFace`):
 *                                 llama (tied embeddings, GQA) and qwen2 (q/k/v biases, untied head)
 *   <out>/<name>.logits.f32       agentrl's own forward: logits [T, V] float32 of each sequence, concatenated
 *   <out>/<name>.logits.json      {vocabSize, sequences: [{ids, offset}], scoreLogprobs: [...]}
 *                                 (scoreLogprobs: TransformerModel.score, the jitted path training uses)
 *   <out>/trajectories.jsonl|parquet   `agentrl export` of a run whose trajectories are agentrl renderings
 *
 *   node --import tsx scripts/interop/python/write-fixtures.ts <out-dir>
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../../../src/core/rng.ts';
import type { Message } from '../../../src/core/types.ts';
import { renderChat } from '../../../src/chat/chat-template.ts';
import { saveCheckpoint } from '../../../src/model/checkpoint.ts';
import { modelConfigSchema, type ModelConfigInput } from '../../../src/model/config.ts';
import { TransformerModel } from '../../../src/engine/transformer-model.ts';
import { initHostParams } from '../../../src/model/params.ts';
import { byteTokenizer } from '../../../src/chat/tokenizer.ts';
import { engineLogits } from '../engine-logits.ts';
import { exportHuggingFace } from '../../../src/serve/export-hf.ts';
import { exportTrajectories } from '../../../src/store/export.ts';
import { RunStore } from '../../../src/store/run-store.ts';
import type { TrajectoryRecord } from '../../../src/store/types.ts';

const out = process.argv[2];
if (out === undefined) {
  process.stderr.write('usage: write-fixtures.ts <out-dir>\n');
  process.exit(2);
}

const lengths = [1, 16, 128, 512];
const models: Record<string, ModelConfigInput> = {
  llama: {
    vocabSize: 272,
    hiddenSize: 64,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    intermediateSize: 128,
    maxSeqLen: 512,
    initStd: 0.15,
  },
  qwen2: {
    vocabSize: 272,
    hiddenSize: 64,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 1,
    intermediateSize: 96,
    maxSeqLen: 512,
    initStd: 0.15,
    attentionBias: true,
    tieWordEmbeddings: false,
    ropeTheta: 1e6,
  },
};

const scratch = await mkdtemp(join(tmpdir(), 'agentrl-python-fixtures-'));
try {
  for (const [name, input] of Object.entries(models)) {
    const config = modelConfigSchema.parse(input);
    const params = initHostParams(config, 5);
    if (config.attentionBias) {
      // non-zero biases, so the check sees them applied
      const rng = new Rng(9);
      for (const [key, tensor] of params)
        if (/\.b[qkv]$/.test(key))
          tensor.data.forEach((_, i) => {
            tensor.data[i] = rng.normal() * 0.1;
          });
    }
    await saveCheckpoint(join(scratch, name), { config, params });
    await exportHuggingFace(join(scratch, name), join(out, name), { name: `agentrl-tiny-${name}` });

    const model = await TransformerModel.fromParams(config, params);
    const rng = new Rng(3);
    const sequences = lengths.map((length) => Array.from({ length }, () => rng.int(byteTokenizer.vocabSize)));
    const chunks: Float32Array[] = [];
    const index: { ids: number[]; offset: number }[] = [];
    let offset = 0;
    for (const ids of sequences) {
      const logits = await engineLogits(model.config, params, [ids]); // [T, V]
      chunks.push(logits);
      index.push({ ids, offset });
      offset += logits.length;
    }
    const score = await model.score(sequences);
    await writeFile(
      join(out, `${name}.logits.f32`),
      Buffer.concat(chunks.map((chunk) => Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))),
    );
    await writeFile(
      join(out, `${name}.logits.json`),
      JSON.stringify({
        vocabSize: config.vocabSize,
        sequences: index,
        scoreLogprobs: score.logprobs.map((row) => Array.from(row)),
      }),
    );
    process.stdout.write(`wrote ${join(out, name)} and agentrl's logits at lengths ${lengths.join(', ')}\n`);
  }

  // A run whose trajectories are agentrl renderings of short tool-using conversations.
  const store = RunStore.open(join(scratch, 'agentrl.db'));
  const run = store.createRun({
    command: 'train',
    namePrefix: 'calculator-grpo',
    seed: 1,
    gitCommit: null,
    config: { env: 'calculator' },
  });
  for (let step = 1; step <= 2; step++) {
    const trajectories = [0, 1, 2].map((index): Omit<TrajectoryRecord, 'step'> => {
      const a = step * 10 + index;
      const messages: Message[] = [
        {
          role: 'system',
          content: 'Compute the expression. Use the calculator tool, then answer in <answer></answer>.',
        },
        { role: 'user', content: `What is ${a} * 3 + 1?` },
        {
          role: 'assistant',
          content: `<tool_call>{"name":"calculator","arguments":{"expression":"${a} * 3 + 1"}}</tool_call>`,
        },
        { role: 'tool', content: String(a * 3 + 1) },
        { role: 'assistant', content: `<answer>${a * 3 + 1 + (index === 2 ? 1 : 0)}</answer>` },
      ];
      const { tokens, assistantMask } = renderChat(messages);
      const reward = index === 2 ? 0 : 1;
      const last = tokens.length - 1;
      return {
        index,
        groupId: `g${step}`,
        seed: a,
        totalReward: reward,
        success: reward === 1,
        truncated: false,
        messages,
        tokens,
        pieces: tokens.map((id) => byteTokenizer.decode([id])),
        lossMask: assistantMask,
        logprobs: assistantMask.map((mask, i) => (mask === 1 ? -0.01 * (i % 7) : 0)),
        rewards: tokens.map((_, i) => (i === last ? reward : 0)),
        advantages: assistantMask.map((mask) => (mask === 1 ? reward - 2 / 3 : 0)),
        turns: [],
      };
    });
    store.recordStep(run.id, { step, metrics: { reward: 2 / 3 }, trajectories });
  }
  for (const format of ['jsonl', 'parquet'] as const) {
    const rows = await exportTrajectories({
      run,
      trajectories: store.iterateTrajectories(run.id),
      format,
      out: join(out, `trajectories.${format}`),
    });
    process.stdout.write(`wrote ${join(out, `trajectories.${format}`)} (${rows} rows)\n`);
  }
  store.close();
} finally {
  await rm(scratch, { recursive: true, force: true });
}
