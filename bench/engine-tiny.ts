/**
 * The tiny reference GPT of bench:engine's first table, in agentrl (a child process): the train
 * step (forward + next-token NLL + backward + clip + AdamW, batch 16 × 128) through
 * `TransformerModel.trainStep`, and generation (batch 16, 16-token prompts, 64 new tokens,
 * temperature 1, per-token log-probs) through `generate(model, …)` — the product's paths.
 * Its PyTorch peer is bench/engine_torch.py (the same model, step and sampler).
 */
import { at } from '../src/core/indexing.ts';
import type { Measurement } from './engine-spawn.ts';
import { tinyGeneration, tinyReference, tokenRows } from './engine-workload.ts';

export interface TinyArgs {
  threads: number;
  steps: number;
  genReps: number;
}

const warmupSteps = 3;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return at(sorted, Math.floor(sorted.length / 2));
}

/** In a child: agentrl's train-step time (median) and generation rate (median). */
export async function measureTiny({ threads, steps, genReps }: TinyArgs): Promise<Measurement> {
  const { TransformerModel } = await import('../src/engine/transformer-model.ts');
  const { generate } = await import('../src/engine/generate.ts');
  const { sftLoss } = await import('../src/algorithms/index.ts');
  const model = await TransformerModel.create(
    {
      vocabSize: tinyReference.vocab,
      hiddenSize: tinyReference.hidden,
      numLayers: tinyReference.layers,
      numHeads: tinyReference.heads,
      numKvHeads: tinyReference.heads,
      intermediateSize: tinyReference.intermediate,
      maxSeqLen: tinyReference.context,
    },
    { seed: 0 },
  );
  const sequences = tokenRows(tinyReference.batch, tinyReference.context, tinyReference.vocab);
  const loss = sftLoss(sequences.map((row) => row.map((_, t) => (t === 0 ? 0 : 1))));
  const stepTimes: number[] = [];
  for (let i = 0; i < warmupSteps + steps; i++) {
    const start = performance.now();
    await model.trainStep(sequences, loss, { learningRate: 1e-3 });
    if (i >= warmupSteps) stepTimes.push((performance.now() - start) / 1000);
  }
  const prompts = tokenRows(tinyGeneration.batch, tinyGeneration.prompt, tinyReference.vocab, 777);
  await generate(model, prompts, { maxNewTokens: tinyGeneration.newTokens, seed: 0 });
  const rates: number[] = [];
  for (let rep = 0; rep < genReps; rep++) {
    const start = performance.now();
    const rows = await generate(model, prompts, { maxNewTokens: tinyGeneration.newTokens, seed: rep + 1 });
    const tokens = rows.reduce((n, row) => n + row.tokens.length, 0);
    rates.push(tokens / ((performance.now() - start) / 1000));
  }
  return {
    system: 'agentrl TransformerModel',
    threads: `${threads} (AGENTRL_THREADS)`,
    figures: { trainStepSeconds: median(stepTimes), genTokensPerSecond: median(rates) },
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    note: `median of ${steps} steps, ${genReps} generations`,
  };
}
