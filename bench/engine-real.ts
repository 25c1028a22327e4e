/**
 * The SmolLM2-135M shape in `npm run bench:engine` (random weights): scoring 16 × 256 tokens and
 * generation (batch 16, 32-token prompts, 128 new tokens, temperature 1, per-token log-probs) on
 * jax-js (the built-in model), onnxruntime (src/engine/onnx, fed the same weights) and PyTorch 2.x
 * (transformers' LlamaForCausalLM in check:real's pinned venv, .venv-real). Each system runs in
 * its own child process, so each peak RSS is its own.
 *
 * jax-js is slow at this size: it scores once (compile included) and samples BENCH_REAL_JAX_NEW
 * (default 16) new tokens after a warm-up; its rate is tokens / seconds of that run.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { at } from '../src/core/indexing.ts';

export const smolShape = {
  vocab: 49152,
  hidden: 576,
  layers: 30,
  heads: 9,
  kv_heads: 3,
  intermediate: 1536,
  context: 2048,
  rope_theta: 100000,
  rms_eps: 1e-5,
};
export const realWork = {
  scoreRows: 16,
  scoreLength: 256,
  genBatch: 16,
  genPrompt: 32,
  genNew: 128,
  reps: Number(process.env.BENCH_REAL_REPS ?? 2),
};
const jaxNewTokens = Number(process.env.BENCH_REAL_JAX_NEW ?? 16);

export interface RealFigures {
  system: string;
  scoreSeconds: number;
  genTokensPerSecond: number;
  peakRssMb: number;
  note?: string;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return at(sorted, Math.floor(sorted.length / 2));
}

function workload(vocab: number) {
  let state = 12345;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % vocab;
  };
  const sequences = Array.from({ length: realWork.scoreRows }, () =>
    Array.from({ length: realWork.scoreLength }, next),
  );
  const prompts = Array.from({ length: realWork.genBatch }, () => Array.from({ length: realWork.genPrompt }, next));
  return { sequences, prompts };
}

const modelConfig = {
  vocabSize: smolShape.vocab,
  hiddenSize: smolShape.hidden,
  numLayers: smolShape.layers,
  numHeads: smolShape.heads,
  numKvHeads: smolShape.kv_heads,
  intermediateSize: smolShape.intermediate,
  maxSeqLen: smolShape.context,
  ropeTheta: smolShape.rope_theta,
  rmsNormEps: smolShape.rms_eps,
};

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await fn();
  return [value, (performance.now() - t0) / 1000];
}

/** In a child process: one system's figures. */
export async function measureRealChild(engine: 'jax' | 'onnx', threads: number, spinning = true): Promise<RealFigures> {
  const { TransformerModel } = await import('../src/model/model.ts');
  const { generate } = await import('../src/model/generate.ts');
  const { OnnxInference } = await import('../src/engine/onnx/onnx-inference.ts');
  const model = await TransformerModel.create(modelConfig, { seed: 0 });
  const { sequences, prompts } = workload(smolShape.vocab);
  const tokens = (rows: { tokens: number[] }[]) => rows.reduce((n, r) => n + r.tokens.length, 0);
  if (engine === 'jax') {
    const [, scoreSeconds] = await timed(() => model.score(sequences));
    await generate(model, prompts, { maxNewTokens: 2, seed: 0 });
    const [rows, genSeconds] = await timed(() => generate(model, prompts, { maxNewTokens: jaxNewTokens, seed: 1 }));
    const note = `1 scoring run (compile included); ${jaxNewTokens} new tokens`;
    return {
      system: `jax-js, ${threads} wasm thread${threads > 1 ? 's' : ''}`,
      scoreSeconds,
      genTokensPerSecond: tokens(rows) / genSeconds,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      note,
    };
  }
  const [inference, sessionSeconds] = await timed(() => OnnxInference.fromModel(model, { threads, spinning }));
  await inference.score(sequences.slice(0, 1));
  await inference.generate(prompts, { maxNewTokens: 4, seed: 0 });
  const scoreTimes: number[] = [];
  const rates: number[] = [];
  for (let rep = 0; rep < realWork.reps; rep++) {
    scoreTimes.push((await timed(() => inference.score(sequences)))[1]);
    const [rows, seconds] = await timed(() =>
      inference.generate(prompts, { maxNewTokens: realWork.genNew, seed: rep + 1 }),
    );
    rates.push(tokens(rows) / seconds);
  }
  const note = `session ${sessionSeconds.toFixed(1)} s; median of ${realWork.reps}`;
  return {
    system: `onnxruntime ${threads} thread${threads > 1 ? 's' : ''}${spinning ? '' : ', no spinning'}`,
    scoreSeconds: median(scoreTimes),
    genTokensPerSecond: median(rates),
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    note,
  };
}

export function runRealChild(
  script: string,
  engine: 'jax' | 'onnx',
  threads: number,
  spinning = true,
): RealFigures | null {
  const out = spawnSync(
    process.execPath,
    ['--import', 'tsx', script, '--real-child', engine, String(threads), String(spinning)],
    {
      env: { ...process.env, AGENTRL_THREADS: String(threads) },
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    },
  );
  if (out.status !== 0) {
    console.error(`${engine} (${threads} threads) failed:\n${out.stderr.trim().split('\n').slice(-5).join('\n')}`);
    return null;
  }
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as RealFigures;
}

/** PyTorch 2.x + transformers in check:real's pinned venv (made on first use from scripts/interop/real/requirements.txt). */
export function runTorchReal(threads: number): RealFigures | null {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const venv = spawnSync(
    'bash',
    ['-c', 'source scripts/interop/lib.sh && ensure_venv .venv-real scripts/interop/real/requirements.txt >&2'],
    { cwd: root, encoding: 'utf8' },
  );
  if (venv.status !== 0) {
    console.error(
      `PyTorch peer unavailable (could not make .venv-real):\n${venv.stderr.trim().split('\n').slice(-3).join('\n')}`,
    );
    return null;
  }
  const args = {
    mode: 'real',
    threads,
    shape: smolShape,
    score_rows: realWork.scoreRows,
    score_len: realWork.scoreLength,
    score_chunk_rows: 4,
    gen_batch: realWork.genBatch,
    gen_prompt: realWork.genPrompt,
    gen_new: realWork.genNew,
    reps: realWork.reps,
  };
  const env = { ...process.env, OMP_NUM_THREADS: String(threads), MKL_NUM_THREADS: String(threads) };
  const out = spawnSync(`${root}.venv-real/bin/python`, [`${root}bench/engine_torch.py`, JSON.stringify(args)], {
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
    system: `PyTorch ${parsed.torch} + transformers, ${threads} thread${threads > 1 ? 's' : ''}`,
    scoreSeconds: parsed.score_s,
    genTokensPerSecond: parsed.gen_tokens_per_s,
    peakRssMb: parsed.peak_rss_mb,
    note: `median of ${realWork.reps}`,
  };
}

/** Runs every system and prints the table and the ratios against PyTorch's best. */
export function benchReal(script: string): void {
  console.log(`\nSmolLM2-135M shape (random weights): ${JSON.stringify(smolShape)}`);
  console.log(
    `scoring ${realWork.scoreRows} × ${realWork.scoreLength} tokens; generation batch ${realWork.genBatch}, ${realWork.genPrompt}-token prompts, ${realWork.genNew} new tokens, per-token log-probs`,
  );
  const jaxThreads = Number(process.env.BENCH_REAL_JAX_THREADS ?? 1);
  const figures = [
    ...(process.env.BENCH_REAL_JAX === '0' ? [] : [runRealChild(script, 'jax', jaxThreads)]),
    runRealChild(script, 'onnx', 1),
    runRealChild(script, 'onnx', 2),
    runRealChild(script, 'onnx', 2, false),
    runTorchReal(1),
    runTorchReal(2),
  ].filter((f): f is RealFigures => f !== null);
  console.log('');
  console.log(`| ${'system'.padEnd(44)} | scoring 16×256 (s) | generation (tok/s) | peak RSS (MB) | notes`);
  console.log(`|${'-'.repeat(46)}|-------------------:|-------------------:|--------------:|------`);
  for (const f of figures) {
    console.log(
      `| ${f.system.padEnd(44)} | ${f.scoreSeconds.toFixed(2).padStart(18)} | ${f.genTokensPerSecond.toFixed(1).padStart(18)} | ${f.peakRssMb.toFixed(0).padStart(13)} | ${f.note ?? ''}`,
    );
  }
  const best = (prefix: string) => {
    const mine = figures.filter((f) => f.system.startsWith(prefix));
    return mine.length === 0
      ? null
      : {
          score: Math.min(...mine.map((f) => f.scoreSeconds)),
          gen: Math.max(...mine.map((f) => f.genTokensPerSecond)),
        };
  };
  const torch = best('PyTorch');
  if (torch === null) return;
  for (const prefix of ['onnxruntime', 'jax-js']) {
    const ours = best(prefix);
    if (ours === null) continue;
    console.log(
      `${prefix}/PyTorch (best of each): scoring speed ${(torch.score / ours.score).toFixed(2)}x, generation speed ${(ours.gen / torch.gen).toFixed(2)}x (above 1 = agentrl faster)`,
    );
  }
}
