/**
 * `npm run bench:engine-train`: the LoRA RL train step on the SmolLM2-135M shape (random weights),
 * 4 × 256 tokens (last 192 of each trained), rank 16, alpha 32, all seven projections — on
 * onnxruntime (src/engine/onnx/onnx-lora-trainer.ts) and PyTorch 2.x + transformers + PEFT
 * (bench/engine_train_torch.py in check:lora's pinned .venv-lora), 1 and 2 threads each, every
 * system in its own child process (its own peak RSS). Prints times, ratios and peak RSS.
 * BENCH_TRAIN_THREADS (default '1,2') picks the thread counts, BENCH_TRAIN_REPS (default 3) the reps.
 *
 * The loss is PPO-clip (token-mean) with old log-probs equal to the current ones. agentrl's loss
 * is a pure JS function of the log-probs (core/loss.ts), so its step is two ORT runs: the forward
 * (log-probs, entropies and the saved activations), the host loss, then the backward of the
 * surrogate from those activations (split-graph.ts); PyTorch's autograd does the same in one
 * process. "SFT-style step" is a loss that does not read the current policy (fixed gradient).
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { smolShape } from './engine-real.ts';
import { at } from '../src/core/indexing.ts';

const work = { rows: 4, length: 256, prompt: 64, rank: 16, alpha: 32, reps: Number(process.env.BENCH_TRAIN_REPS ?? 3) };

interface Figures {
  system: string;
  stepSeconds: number;
  trainRunSeconds?: number;
  peakRssMb: number;
  note: string;
}

/** The 1-minute load average when a system finished: other work on the machine shows here. */
function loadAverage(): string {
  return at(loadavg(), 0).toFixed(1);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return at(sorted, Math.floor(sorted.length / 2));
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await fn();
  return [value, (performance.now() - t0) / 1000];
}

/** In a child process: the ONNX trainer's figures at `threads`. */
async function onnxChild(threads: number): Promise<Figures> {
  const { modelConfigSchema } = await import('../src/model/config.ts');
  const { initHostParams } = await import('../src/model/params.ts');
  const { initLoraParams, loraConfigSchema } = await import('../src/model/lora.ts');
  const { rlLoss } = await import('../src/algorithms/rl-loss.ts');
  const { OnnxLoraTrainer } = await import('../src/engine/onnx/onnx-lora-trainer.ts');
  const config = modelConfigSchema.parse({
    vocabSize: smolShape.vocab,
    hiddenSize: smolShape.hidden,
    numLayers: smolShape.layers,
    numHeads: smolShape.heads,
    numKvHeads: smolShape.kv_heads,
    intermediateSize: smolShape.intermediate,
    maxSeqLen: smolShape.context,
    ropeTheta: smolShape.rope_theta,
    rmsNormEps: smolShape.rms_eps,
  });
  const lora = loraConfigSchema.parse({ rank: work.rank, alpha: work.alpha });
  const trainer = OnnxLoraTrainer.create({
    config,
    params: initHostParams(config, 0),
    lora,
    adapters: initLoraParams(config, lora, 1),
    options: { threads },
  });
  let state = 12345;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31);
  const sequences = Array.from({ length: work.rows }, () =>
    Array.from({ length: work.length }, () => next() % smolShape.vocab),
  );
  const lossMask = sequences.map((s) => Float64Array.from(s, (_, t) => (t >= work.prompt ? 1 : 0)));
  const advantages = sequences.map((s) => Float64Array.from(s, () => (next() % 1000) / 1000 - 0.5));
  const ppoStep = async () => {
    const { logprobs } = await trainer.score(sequences);
    return trainer.trainStep(sequences, rlLoss({ oldLogprobs: logprobs, advantages, lossMask }), {
      learningRate: 1e-4,
    });
  };
  const [, firstSeconds] = await timed(ppoStep); // builds both sessions
  const steps: number[] = [];
  const trainRuns: number[] = [];
  const surrogateOnly = {
    name: 'fixed-gradient',
    dependsOnCurrent: false,
    compute: () => ({ loss: 0, gradLogprobs: lossMask.map((m) => Float32Array.from(m, (x) => -x / 768)), metrics: {} }),
  };
  for (let rep = 0; rep < work.reps; rep++) {
    // The old log-probs come from the sampler in RL; here a scoring run stands in (not timed).
    const { logprobs } = await trainer.score(sequences);
    steps.push(
      (
        await timed(() =>
          trainer.trainStep(sequences, rlLoss({ oldLogprobs: logprobs, advantages, lossMask }), { learningRate: 1e-4 }),
        )
      )[1],
    );
    trainRuns.push((await timed(() => trainer.trainStep(sequences, surrogateOnly, { learningRate: 1e-4 })))[1]);
  }
  await trainer.release();
  const note = `first step ${firstSeconds.toFixed(1)} s (graphs + sessions); median of ${work.reps}; load ${loadAverage()}`;
  return {
    system: `agentrl onnxruntime ${threads} thread${threads > 1 ? 's' : ''}`,
    stepSeconds: median(steps),
    trainRunSeconds: median(trainRuns),
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    note,
  };
}

function runOnnx(threads: number): Figures | null {
  const out = spawnSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', String(threads)],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  if (out.status !== 0) {
    const why =
      out.signal === null
        ? out.stderr.trim().split('\n').slice(-5).join('\n')
        : `killed by ${out.signal} (out of memory?)`;
    console.error(`onnxruntime (${threads} threads) failed:\n${why}`);
    return null;
  }
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as Figures;
}

function runTorch(threads: number): Figures | null {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const venv = spawnSync(
    'bash',
    ['-c', 'source scripts/interop/lib.sh && ensure_venv .venv-lora scripts/interop/lora/requirements.txt >&2'],
    { cwd: root, encoding: 'utf8' },
  );
  if (venv.status !== 0) {
    console.error(
      `PyTorch peer unavailable (could not make .venv-lora):\n${venv.stderr.trim().split('\n').slice(-3).join('\n')}`,
    );
    return null;
  }
  const args = {
    threads,
    shape: smolShape,
    rows: work.rows,
    length: work.length,
    prompt: work.prompt,
    rank: work.rank,
    alpha: work.alpha,
    reps: work.reps,
  };
  const env = { ...process.env, OMP_NUM_THREADS: String(threads), MKL_NUM_THREADS: String(threads) };
  const out = spawnSync(`${root}.venv-lora/bin/python`, [`${root}bench/engine_train_torch.py`, JSON.stringify(args)], {
    encoding: 'utf8',
    env,
    maxBuffer: 1 << 24,
  });
  if (out.status !== 0) {
    console.error(`PyTorch peer (${threads} threads) failed:\n${out.stderr.trim().split('\n').slice(-3).join('\n')}`);
    return null;
  }
  const parsed = JSON.parse(out.stdout.trim().split('\n').at(-1)!);
  return {
    system: `PyTorch ${parsed.torch} + PEFT, ${threads} thread${threads > 1 ? 's' : ''}`,
    stepSeconds: parsed.step_s,
    peakRssMb: parsed.peak_rss_mb,
    note: `median of ${work.reps} after a warm-up step; load ${loadAverage()}`,
  };
}

function main(): void {
  console.log(
    `LoRA RL train step, SmolLM2-135M shape (random weights): ${work.rows} × ${work.length} tokens (${work.length - work.prompt} trained per row), rank ${work.rank}, alpha ${work.alpha}, q/k/v/o/gate/up/down`,
  );
  const threads = (process.env.BENCH_TRAIN_THREADS ?? '1,2').split(',').map(Number);
  const figures = [...threads.map(runOnnx), ...threads.map(runTorch)].filter((f): f is Figures => f !== null);
  console.log('');
  console.log(`| ${'system'.padEnd(36)} | PPO step (s) | SFT-style step (s) | peak RSS (MB) | notes`);
  console.log(`|${'-'.repeat(38)}|-------------:|-------------------:|--------------:|------`);
  for (const f of figures) {
    console.log(
      `| ${f.system.padEnd(36)} | ${f.stepSeconds.toFixed(2).padStart(12)} | ${(f.trainRunSeconds?.toFixed(2) ?? '—').padStart(18)} | ${f.peakRssMb.toFixed(0).padStart(13)} | ${f.note}`,
    );
  }
  const ours = figures.filter((f) => f.system.startsWith('agentrl'));
  const torch = figures.filter((f) => f.system.startsWith('PyTorch'));
  if (ours.length === 0 || torch.length === 0) return;
  const torchBest = Math.min(...torch.map((f) => f.stepSeconds));
  const stepBest = Math.min(...ours.map((f) => f.stepSeconds));
  const runBest = Math.min(...ours.map((f) => f.trainRunSeconds ?? Infinity));
  console.log(
    `agentrl/PyTorch step time (best of each; target ≤ 1.5): PPO step ${(stepBest / torchBest).toFixed(2)}x, SFT-style step ${(runBest / torchBest).toFixed(2)}x`,
  );
}

if (process.argv[2] === '--child') {
  onnxChild(Number(process.argv[3])).then((figures) => console.log(JSON.stringify(figures)));
} else {
  main();
}
