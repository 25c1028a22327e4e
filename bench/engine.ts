/**
 * `npm run bench:engine`: agentrl's one engine (onnxruntime) against its peers, side by side in one
 * run, each system in its own child process (its own peak RSS), each at every thread setting with
 * the best compared (issue 28, item 3). Tables, in order:
 *
 *   1. Roofline of this machine: fp32 matmul GFLOPS (onnxruntime MatMul; PyTorch's for reference)
 *      and memory bandwidth (onnxruntime Add, a JS copy, PyTorch's add); every later figure is
 *      also printed as a fraction of the bound it is under (bench/roofline-bounds.ts).
 *   2. The tiny reference GPT (vocab 64, d_model 128, 4 layers): train step 16 × 128 and
 *      generation (batch 16, 64 new tokens) vs PyTorch (Debian python3-torch + OpenBLAS when
 *      installed, and the pinned PyTorch 2.x venv).
 *   3. SmolLM2-135M-Instruct (the pulled GGUF's weights, and random weights of its shape):
 *      generation at batch 1, 16, 64 (32-token prompts, 128 new tokens, T = 1, per-token
 *      log-probs) vs llama.cpp through node-llama-cpp on the same GGUF; scoring 16 × 256 vs
 *      PyTorch + transformers; the LoRA PPO step 4 × 256 (rank 16, seven projections) vs PyTorch +
 *      transformers + PEFT.
 *   4. The ratios against each target, "met" / "not met".
 *
 * Peers: node-llama-cpp (a dev dependency); PyTorch 2.x + transformers + PEFT in the pinned venv of
 * reference:engine (.venv-reference-engine from scripts/reference/engine/requirements.txt, made on
 * first use); the real weights need `agentrl models pull smollm2-135m-instruct` first.
 *
 * Environment (bench/engine-settings.ts holds the defaults):
 *   BENCH_SECTIONS      roofline,tiny,generation,scoring,step (default: all)
 *   BENCH_THREADS       thread counts each system runs at (default 1,2)
 *   BENCH_REPS          timed repetitions per figure after a warm-up; the best counts (default 2)
 *   BENCH_WEIGHTS       real,random (default both)        BENCH_MODEL  the real model (smollm2-135m-instruct)
 *   BENCH_GEN_BATCHES   1,16,64   BENCH_GEN_PROMPT 32   BENCH_GEN_NEW 128
 *   BENCH_GEN_BASES     float32,int8 (how agentrl's generation session holds the base; a row each; int4 too)
 *   BENCH_SCORE_ROWS    16        BENCH_SCORE_LENGTH 256
 *   BENCH_STEP_ROWS     4         BENCH_STEP_LENGTH 256   BENCH_STEP_TRAIN_TOKENS 0 (the model's own)
 *   BENCH_TINY_STEPS    12        BENCH_TINY_GEN_REPS 5
 *   BENCH_MATMUL_N      2048      BENCH_STREAM_MB 256
 *   BENCH_PYTHON        0 skips the PyTorch peers     BENCH_CHILD_TIMEOUT_S  per child (3600)
 *   BENCH_BASELINE_DIR  a checkout of agentrl before issue 28 with its node_modules, whose generation is
 *                       measured in the same run for "≥ 3× today's" (else the notes' figures, another machine):
 *                       git worktree add --detach /tmp/agentrl-before 1f45ca8 && (cd /tmp/agentrl-before && npm ci)
 * Smoke run: BENCH_REPS=1 BENCH_THREADS=2 BENCH_GEN_NEW=8 BENCH_GEN_BATCHES=1,4 BENCH_SCORE_ROWS=2
 *   BENCH_SCORE_LENGTH=64 BENCH_STEP_LENGTH=64 BENCH_TINY_STEPS=2 BENCH_TINY_GEN_REPS=1
 *   BENCH_MATMUL_N=512 BENCH_STREAM_MB=32 npm run bench:engine
 *
 * Time peers only on a quiet machine: every figure here shares the same cores.
 */
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { at } from '../src/core/indexing.ts';
import { benchSettings } from './engine-settings.ts';
import { benchRoofline, benchTiny } from './engine-machine.ts';
import { printTargets, type TargetCheck } from './engine-report.ts';
import { benchSmol } from './engine-smol.ts';

/** The vector ISA and last-level cache, which set the roofline (Linux; empty elsewhere). */
function cpuFeatures(): string {
  const flags = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const isa = ['avx2', 'avx512f', 'avx512_bf16', 'amx_tile'].filter((flag) => new RegExp(`\\b${flag}\\b`).test(flags));
  const l3 = '/sys/devices/system/cpu/cpu0/cache/index3/size';
  return `${isa.join(' ')}${existsSync(l3) ? `; L3 ${readFileSync(l3, 'utf8').trim()}` : ''}`;
}

const settings = benchSettings();
const started = performance.now();
console.log(
  `bench:engine on ${cpus().length} × ${at(cpus(), 0).model.trim()} (${cpuFeatures()}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB; load average ${at(loadavg(), 0).toFixed(1)}`,
);
console.log(`settings: ${JSON.stringify(settings)}`);
const roofline = settings.sections.includes('roofline') ? benchRoofline(settings) : null;
const checks: TargetCheck[] = [];
if (settings.sections.includes('tiny')) checks.push(...benchTiny(settings, roofline));
checks.push(...(await benchSmol(settings, roofline)));
printTargets(checks);
console.log(
  `\nbench:engine took ${((performance.now() - started) / 60000).toFixed(1)} min; load average at the end ${at(loadavg(), 0).toFixed(1)}`,
);
