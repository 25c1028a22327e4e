/**
 * llama.cpp's generation through node-llama-cpp (a dev dependency of the bench), on the same GGUF
 * agentrl loads (the pulled Q4_1 file), CPU only, at `threads` (a bench:engine child).
 *
 * A batch of B rows is B parallel sequences of one context (`createContext({ sequences: B })`):
 * node-llama-cpp puts the next token of every sequence that is waiting into one llama.cpp decode
 * (its default "nextCycle" batching), so the B rows share each pass over the weights as agentrl's
 * batch does. Each row: the same 32 prompt token ids as agentrl's, then 128 tokens sampled at
 * temperature 1 over the full vocabulary (top-k 0, top-p 1, min-p 0), each with its probability
 * (`evaluateWithMetadata(…, { confidence: true })`, its log = the per-token log-prob); an EOS
 * token does not end a row. Best of `reps` after a warm-up. Figure names: `gen.b<batch>` (tok/s).
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from '../src/core/errors.ts';
import type { Measurement } from './engine-spawn.ts';
import { tokenRows } from './engine-workload.ts';
import { realGgufPath } from './engine-weights.ts';

export interface LlamaArgs {
  threads: number;
  model: string;
  /** The model's vocabulary size (the prompts' ids are below it: the same ids as agentrl's). */
  vocab: number;
  genBatches: number[];
  genPrompt: number;
  genNew: number;
  reps: number;
}

/** In a child: llama.cpp's generation rate at each batch size. */
export async function measureLlama(args: LlamaArgs): Promise<Measurement> {
  const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
  const gguf = await realGgufPath(args.model);
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: gguf, gpuLayers: 0 });
  const figures: Record<string, number> = {};
  let logprobSum = 0;
  const shortRows: string[] = [];
  for (const batch of args.genBatches) {
    const context = await model.createContext({
      sequences: batch,
      contextSize: args.genPrompt + args.genNew + 8,
      batchSize: Math.max(512, batch * args.genPrompt),
      threads: { ideal: args.threads, min: args.threads },
    });
    const sequences = Array.from({ length: batch }, () => context.getSequence());
    const prompts = tokenRows(batch, args.genPrompt, args.vocab, 777 + batch);
    const generateAll = async (seed: number, newTokens: number): Promise<number> => {
      const counts = await Promise.all(
        sequences.map(async (sequence, row) => {
          await sequence.clearHistory();
          let count = 0;
          const tokens = (prompts[row] ?? []) as Parameters<typeof sequence.evaluateWithMetadata>[0];
          const options = { temperature: 1, topK: 0, topP: 1, minP: 0, seed: seed * 1000 + row, yieldEogToken: true };
          for await (const output of sequence.evaluateWithMetadata(tokens, { confidence: true }, options)) {
            logprobSum += Math.log(output.confidence);
            count += 1;
            if (count >= newTokens) break;
          }
          return count;
        }),
      );
      return counts.reduce((n, count) => n + count, 0);
    };
    await generateAll(0, Math.min(4, args.genNew));
    let best = 0;
    for (let rep = 0; rep < args.reps; rep++) {
      const start = performance.now();
      const tokens = await generateAll(rep + 1, args.genNew);
      best = Math.max(best, tokens / ((performance.now() - start) / 1000));
      if (tokens < batch * args.genNew) shortRows.push(`batch ${batch}: ${tokens} of ${batch * args.genNew} tokens`);
    }
    figures[`gen.b${batch}`] = best;
    await context.dispose();
  }
  await model.dispose();
  if (!Number.isFinite(logprobSum))
    throw new InvalidArgumentError('llama.cpp returned a zero probability for a sampled token');
  const manifest = new URL('../node_modules/node-llama-cpp/package.json', import.meta.url);
  const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  return {
    system: `llama.cpp (node-llama-cpp ${version}, GGUF ${ggufType(gguf)})`,
    threads: String(args.threads),
    figures,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    note: `real weights; best of ${args.reps}${shortRows.length > 0 ? `; rows ended early (${shortRows.join(', ')})` : ''}`,
  };
}

function ggufType(path: string): string {
  return /\.(Q\d_\w+|F16|F32|BF16)\.gguf$/i.exec(path)?.[1] ?? 'file';
}
