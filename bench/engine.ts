/**
 * `npm run bench:engine`: train-step time and generation speed of the reference model in agentrl
 * (1 and 2 wasm threads) and in PyTorch (Debian python3-torch with OpenBLAS), measured in the
 * same run. Prints both systems' figures and the agentrl/PyTorch ratios.
 *
 * Reference model: vocab 64, d_model 128, 4 layers, 4 heads, SwiGLU MLP 4x (512), context 128.
 * Train step: batch 16 × 128 tokens, forward + next-token NLL + backward + clip + AdamW.
 * Generation: batch 16, 16-token prompts, 64 new tokens, temperature 1, per-token log-probs.
 *
 * Then the SmolLM2-135M shape (bench/engine-real.ts): scoring and generation on jax-js,
 * onnxruntime and PyTorch 2.x + transformers (BENCH_REAL=0 skips it; BENCH_REFERENCE=0 skips the
 * reference model).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { benchReal, measureRealChild } from './engine-real.ts';
import { at } from '../src/core/indexing.ts';

const reference = { vocab: 64, hidden: 128, layers: 4, heads: 4, intermediate: 512, context: 128, batch: 16 };
const generation = { batch: 16, prompt: 16, newTokens: 64 };
const counts = {
  warmup: 3,
  steps: Number(process.env.BENCH_STEPS ?? 12),
  genReps: Number(process.env.BENCH_GEN_REPS ?? 5),
};

interface Figures {
  trainStepMs: number;
  genTokensPerSecond: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return at(sorted, Math.floor(sorted.length / 2));
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
  const sequences = Array.from({ length: reference.batch }, () =>
    Array.from({ length: reference.context }, () => rng.int(reference.vocab)),
  );
  const mask = sequences.map((s) => s.map((_, t) => (t === 0 ? 0 : 1)));
  const loss = sftLoss(mask);
  const times: number[] = [];
  for (let i = 0; i < counts.warmup + counts.steps; i++) {
    const t0 = performance.now();
    await model.trainStep(sequences, loss, { learningRate: 1e-3 });
    if (i >= counts.warmup) times.push(performance.now() - t0);
  }
  const prompts = Array.from({ length: generation.batch }, () =>
    Array.from({ length: generation.prompt }, () => rng.int(reference.vocab)),
  );
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

/**
 * PyTorch's speed on this 2-core machine depends on how its own threads and OpenBLAS's share the
 * cores (2 × 2 threads oversubscribe and run ~2x slower), so the peer is measured in several
 * settings and the best figure of each kind is the one compared against.
 */
const torchSettings = [
  { threads: 1, blasThreads: 2 },
  { threads: 2, blasThreads: 1 },
  { threads: 1, blasThreads: 1 },
  { threads: 2, blasThreads: 2 },
];

function runTorch(threads: number, blasThreads: number): (Figures & { torch: string }) | null {
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
  const env = { ...process.env, OPENBLAS_NUM_THREADS: String(blasThreads), OMP_NUM_THREADS: String(threads) };
  const out = spawnSync(python, [script, JSON.stringify(args)], { encoding: 'utf8', env });
  if (out.status !== 0) {
    console.error(
      `PyTorch peer unavailable (install Debian python3-torch and libopenblas0-pthread):\n${out.stderr.trim().split('\n').at(-1)}`,
    );
    return null;
  }
  const parsed = JSON.parse(out.stdout.trim().split('\n').at(-1)!);
  return { torch: parsed.torch, trainStepMs: parsed.train_step_ms, genTokensPerSecond: parsed.gen_tokens_per_s };
}

if (process.argv.includes('--real-child')) {
  const at = process.argv.indexOf('--real-child');
  console.log(
    JSON.stringify(
      await measureRealChild(
        process.argv[at + 1] as 'jax' | 'onnx',
        Number(process.argv[at + 2]),
        process.argv[at + 3] !== 'false',
      ),
    ),
  );
  process.exit(0);
}

if (process.argv.includes('--child')) {
  console.log(JSON.stringify(await measureAgentrl()));
  process.exit(0);
}

/** The reference model: agentrl at 1 and 2 wasm threads vs PyTorch in four thread settings. */
function benchReference(): void {
  console.log(
    `reference model: ${JSON.stringify(reference)}; generation ${JSON.stringify(generation)}; ${counts.steps} train steps, ${counts.genReps} generations (medians)`,
  );
  const one = runChild(1);
  const two = runChild(2);
  const peers = torchSettings.map((setting) => ({ setting, figures: runTorch(setting.threads, setting.blasThreads) }));
  const row = (name: string, f: Figures) =>
    `| ${name.padEnd(40)} | ${f.trainStepMs.toFixed(0).padStart(15)} | ${f.genTokensPerSecond.toFixed(0).padStart(18)} |`;
  console.log('');
  console.log(`| ${'system'.padEnd(40)} | train step (ms) | generation (tok/s) |`);
  console.log(`|${'-'.repeat(42)}|----------------:|-------------------:|`);
  console.log(row('agentrl, 1 wasm thread', one));
  console.log(row('agentrl, 2 wasm threads', two));
  for (const { setting, figures } of peers) {
    if (figures)
      console.log(row(`PyTorch ${figures.torch}, ${setting.threads} thr + OpenBLAS ${setting.blasThreads}`, figures));
  }
  console.log('');
  console.log(
    `agentrl 2-thread speed-up over 1 thread: train ${(one.trainStepMs / two.trainStepMs).toFixed(2)}x, generation ${(two.genTokensPerSecond / one.genTokensPerSecond).toFixed(2)}x`,
  );
  const measured = peers.flatMap((p) => (p.figures ? [p.figures] : []));
  if (measured.length > 0) {
    const peerTrain = Math.min(...measured.map((f) => f.trainStepMs));
    const peerGen = Math.max(...measured.map((f) => f.genTokensPerSecond));
    const ours = {
      train: Math.min(one.trainStepMs, two.trainStepMs),
      gen: Math.max(one.genTokensPerSecond, two.genTokensPerSecond),
    };
    console.log(
      `best of each: agentrl train ${ours.train.toFixed(0)} ms vs PyTorch ${peerTrain.toFixed(0)} ms; generation ${ours.gen.toFixed(0)} vs ${peerGen.toFixed(0)} tok/s`,
    );
    console.log(
      `agentrl/PyTorch train-step time ratio: ${(ours.train / peerTrain).toFixed(2)} (below 1 = agentrl faster)`,
    );
    console.log(
      `agentrl/PyTorch generation speed ratio: ${(ours.gen / peerGen).toFixed(2)} (above 1 = agentrl faster)`,
    );
  }
}

if (process.env.BENCH_REFERENCE !== '0') benchReference();
if (process.env.BENCH_REAL !== '0') benchReal(fileURLToPath(import.meta.url));
