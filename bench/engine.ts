/**
 * `npm run bench:engine`: train-step time and generation speed of the reference model in agentrl
 * (1 and 2 wasm threads) and in PyTorch (Debian python3-torch with OpenBLAS), measured in the
 * same run. Prints both systems' figures and the agentrl/PyTorch ratios.
 *
 * Reference model: vocab 64, d_model 128, 4 layers, 4 heads, SwiGLU MLP 4x (512), context 128.
 * Train step: batch 16 × 128 tokens, forward + next-token NLL + backward + clip + AdamW.
 * Generation: batch 16, 16-token prompts, 64 new tokens, temperature 1, per-token log-probs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const reference = { vocab: 64, hidden: 128, layers: 4, heads: 4, intermediate: 512, context: 128, batch: 16 };
const generation = { batch: 16, prompt: 16, newTokens: 64 };
const counts = { warmup: 3, steps: Number(process.env.BENCH_STEPS ?? 12), genReps: Number(process.env.BENCH_GEN_REPS ?? 5) };

interface Figures {
  trainStepMs: number;
  genTokensPerSecond: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function measureAgentrl(): Promise<Figures> {
  const { TransformerModel } = await import('../src/model/model.ts');
  const { generate } = await import('../src/model/generate.ts');
  const { sftLoss } = await import('../src/algorithms/index.ts');
  const { Rng } = await import('../src/core/rng.ts');
  const model = await TransformerModel.create(
    {
      vocabSize: reference.vocab,
      hiddenSize: reference.hidden,
      numLayers: reference.layers,
      numHeads: reference.heads,
      numKvHeads: reference.heads,
      intermediateSize: reference.intermediate,
      maxSeqLen: reference.context,
    },
    { seed: 0 },
  );
  const rng = new Rng(0);
  const sequences = Array.from({ length: reference.batch }, () => Array.from({ length: reference.context }, () => rng.int(reference.vocab)));
  const mask = sequences.map((s) => s.map((_, t) => (t === 0 ? 0 : 1)));
  const loss = sftLoss(mask);
  const times: number[] = [];
  for (let i = 0; i < counts.warmup + counts.steps; i++) {
    const t0 = performance.now();
    await model.trainStep(sequences, loss, { learningRate: 1e-3 });
    if (i >= counts.warmup) times.push(performance.now() - t0);
  }
  const prompts = Array.from({ length: generation.batch }, () => Array.from({ length: generation.prompt }, () => rng.int(reference.vocab)));
  await generate(model, prompts, { maxNewTokens: generation.newTokens, seed: 0 });
  const rates: number[] = [];
  for (let i = 0; i < counts.genReps; i++) {
    const t0 = performance.now();
    const rows = await generate(model, prompts, { maxNewTokens: generation.newTokens, seed: i + 1 });
    const tokens = rows.reduce((n, r) => n + r.tokens.length, 0);
    rates.push(tokens / ((performance.now() - t0) / 1000));
  }
  return { trainStepMs: median(times), genTokensPerSecond: median(rates) };
}

function runChild(threads: number): Figures {
  const script = fileURLToPath(import.meta.url);
  const out = spawnSync(process.execPath, ['--import', 'tsx', script, '--child'], {
    env: { ...process.env, AGENTRL_THREADS: String(threads) },
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`agentrl measurement (${threads} threads) failed:\n${out.stderr}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as Figures;
}

function runTorch(threads: number): (Figures & { torch: string }) | null {
  const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const args = {
    threads,
    ...reference,
    warmup: counts.warmup,
    steps: counts.steps,
    gen_batch: generation.batch,
    gen_prompt: generation.prompt,
    gen_new: generation.newTokens,
    gen_reps: counts.genReps,
  };
  const script = fileURLToPath(new URL('./engine_torch.py', import.meta.url));
  const out = spawnSync(python, [script, JSON.stringify(args)], { encoding: 'utf8' });
  if (out.status !== 0) {
    console.error(`PyTorch peer unavailable (install Debian python3-torch and libopenblas0-pthread):\n${out.stderr.trim().split('\n').at(-1)}`);
    return null;
  }
  const parsed = JSON.parse(out.stdout.trim().split('\n').at(-1)!);
  return { torch: parsed.torch, trainStepMs: parsed.train_step_ms, genTokensPerSecond: parsed.gen_tokens_per_s };
}

if (process.argv.includes('--child')) {
  console.log(JSON.stringify(await measureAgentrl()));
  process.exit(0);
}

console.log(`reference model: ${JSON.stringify(reference)}; generation ${JSON.stringify(generation)}; ${counts.steps} train steps, ${counts.genReps} generations (medians)`);
const one = runChild(1);
const two = runChild(2);
const torch = runTorch(2);
const row = (name: string, f: Figures) => `| ${name.padEnd(28)} | ${f.trainStepMs.toFixed(0).padStart(14)} | ${f.genTokensPerSecond.toFixed(0).padStart(16)} |`;
console.log('');
console.log('| system                       | train step (ms) | generation (tok/s) |');
console.log('|------------------------------|----------------:|-------------------:|');
console.log(row('agentrl, 1 thread', one));
console.log(row('agentrl, 2 threads', two));
if (torch) console.log(row(`PyTorch ${torch.torch}, 2 threads`, torch));
console.log('');
console.log(`agentrl 2-thread speed-up over 1 thread: train ${(one.trainStepMs / two.trainStepMs).toFixed(2)}x, generation ${(two.genTokensPerSecond / one.genTokensPerSecond).toFixed(2)}x`);
if (torch) {
  const best = { train: Math.min(one.trainStepMs, two.trainStepMs), gen: Math.max(one.genTokensPerSecond, two.genTokensPerSecond) };
  console.log(`agentrl/PyTorch train-step time ratio: ${(best.train / torch.trainStepMs).toFixed(2)} (below 1 = agentrl faster)`);
  console.log(`agentrl/PyTorch generation speed ratio: ${(best.gen / torch.genTokensPerSecond).toFixed(2)} (above 1 = agentrl faster)`);
}
