/**
 * agentrl's generation and scoring on SmolLM2-135M's shape (a bench:engine child): one
 * `OnnxInference` session over the real or random weights at `threads`; generation at each batch
 * size (32-token prompts, 128 new tokens, temperature 1, per-token log-probs, no stop token: every
 * row runs to its length) and scoring of rows × length tokens. Best of `reps` after a warm-up.
 * Figure names: `gen.b<batch>` (tok/s, new tokens of all rows / seconds), `scoreSeconds`.
 */
import type { BaseQuantization } from '../src/model/model-options.ts';
import type { Measurement } from './engine-spawn.ts';
import { tokenRows, type WeightKind } from './engine-workload.ts';
import { benchWeights } from './engine-weights.ts';

export interface InferenceArgs {
  threads: number;
  weights: WeightKind;
  model: string;
  generate: boolean;
  score: boolean;
  /** How the generation session holds the base (scoring reads float32 whatever it is). Default float32. */
  baseQuantization?: BaseQuantization;
  genBatches: number[];
  genPrompt: number;
  genNew: number;
  scoreRows: number;
  scoreLength: number;
  reps: number;
}

async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return (performance.now() - start) / 1000;
}

/** In a child: generation rates and scoring time of agentrl's inference session. */
export async function measureInference(args: InferenceArgs): Promise<Measurement> {
  const { OnnxInference } = await import('../src/engine/onnx/onnx-inference.ts');
  const { config, params } = await benchWeights(args.weights, args.model);
  const start = performance.now();
  const baseQuantization = args.baseQuantization ?? 'float32';
  const inference = await OnnxInference.create({
    config,
    params,
    options: { threads: args.threads, baseQuantization },
  });
  const sessionSeconds = (performance.now() - start) / 1000;
  const figures: Record<string, number> = {};
  if (args.generate) {
    for (const batch of args.genBatches) {
      const prompts = tokenRows(batch, args.genPrompt, config.vocabSize, 777 + batch);
      await inference.generate(prompts, { maxNewTokens: Math.min(4, args.genNew), seed: 0 });
      let best = Infinity;
      for (let rep = 0; rep < args.reps; rep++) {
        let tokens = 0;
        const time = await seconds(async () => {
          const rows = await inference.generate(prompts, { maxNewTokens: args.genNew, temperature: 1, seed: rep + 1 });
          tokens = rows.reduce((n, row) => n + row.tokens.length, 0);
        });
        best = Math.min(best, time / tokens);
      }
      figures[`gen.b${batch}`] = 1 / best;
    }
  }
  if (args.score) {
    const sequences = tokenRows(args.scoreRows, args.scoreLength, config.vocabSize);
    await inference.score(sequences.slice(0, 1).map((row) => row.slice(0, 32)));
    let best = Infinity;
    for (let rep = 0; rep < args.reps; rep++) best = Math.min(best, await seconds(() => inference.score(sequences)));
    figures.scoreSeconds = best;
  }
  await inference.release();
  return {
    system: baseQuantization === 'float32' ? 'agentrl onnxruntime' : `agentrl onnxruntime, ${baseQuantization} base`,
    threads: String(args.threads),
    figures,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    note: `${args.weights} weights; session ${sessionSeconds.toFixed(1)} s; best of ${args.reps}`,
  };
}
