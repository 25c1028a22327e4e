/**
 * Every system of `npm run bench:engine` runs in its own child process, one at a time, so its
 * peak RSS is its own and no two systems share the cores. A child prints one JSON line last: a
 * `Measurement`. A child that fails is reported on stderr and left out of the tables.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentRlError } from '../src/core/errors.ts';

/** What one child measured. */
export interface Measurement {
  /** The system and its setting, e.g. "agentrl onnxruntime" or "PyTorch 2.15.0 + transformers". */
  system: string;
  /** Its thread setting, printed as is (e.g. "2", "1 + OpenBLAS 2"). */
  threads: string;
  /** Figures by name (seconds, tok/s, GFLOPS, GB/s; the name says which). */
  figures: Record<string, number>;
  /** The child's peak resident set, MB. */
  peakRssMb: number;
  note?: string;
}

/** A child process of the bench failed (its stderr's tail is in the message). */
export class BenchChildError extends AgentRlError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('BENCH_CHILD', message, details);
  }
}

const root = fileURLToPath(new URL('..', import.meta.url));
const childScript = fileURLToPath(new URL('./engine-child.ts', import.meta.url));
const childTimeoutMs = Number(process.env.BENCH_CHILD_TIMEOUT_S ?? 3600) * 1000;

function lastJsonLine(stdout: string, label: string): Measurement {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line) as Measurement;
  } catch {
    throw new BenchChildError(`${label}: no JSON result line (last line: ${line.slice(0, 200)})`);
  }
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, label: string, cwd = root): Measurement | null {
  const out = spawnSync(command, args, {
    cwd,
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    timeout: childTimeoutMs,
  });
  if (out.status !== 0) {
    const why =
      out.signal === null
        ? out.stderr.trim().split('\n').slice(-6).join('\n')
        : `killed by ${out.signal} (out of memory, or over BENCH_CHILD_TIMEOUT_S)`;
    console.error(`${label} failed:\n${why}`);
    return null;
  }
  try {
    return lastJsonLine(out.stdout, label);
  } catch (error) {
    console.error((error as Error).message);
    return null;
  }
}

/** A node child (bench/engine-child.ts `kind`), at `threads` (also AGENTRL_THREADS for the engine's own pools). */
export function runNodeChild(kind: string, args: Record<string, unknown>, threads: number): Measurement | null {
  const env = { ...process.env, AGENTRL_THREADS: String(threads) };
  const payload = JSON.stringify({ ...args, threads });
  return run(process.execPath, ['--import', 'tsx', childScript, kind, payload], env, `${kind} (${threads} threads)`);
}

/** The child's own files, copied into a baseline checkout's bench/ to measure that checkout's engine. */
const childFiles = [
  'engine-child.ts',
  'engine-spawn.ts',
  'engine-workload.ts',
  'engine-weights.ts',
  'engine-inference.ts',
  'engine-llama.ts',
  'engine-tiny.ts',
  'engine-train.ts',
  'roofline.ts',
];

/**
 * A node child run inside another checkout of agentrl (`dir`, with its own node_modules): this
 * bench's child files are copied into its bench/ (overwriting theirs: use a throwaway worktree),
 * so the same measurement runs on that checkout's engine.
 */
export function runBaselineChild(
  dir: string,
  kind: string,
  args: Record<string, unknown>,
  threads: number,
): Measurement | null {
  for (const file of childFiles) copyFileSync(join(root, 'bench', file), join(dir, 'bench', file));
  const env = { ...process.env, AGENTRL_THREADS: String(threads) };
  const payload = JSON.stringify({ ...args, threads });
  const script = join(dir, 'bench', 'engine-child.ts');
  return run(
    process.execPath,
    ['--import', 'tsx', script, kind, payload],
    env,
    `baseline ${kind} (${threads} threads)`,
    dir,
  );
}

/** A Python child: `script` (in bench/) with one JSON argument; torch's and BLAS's thread counts set. */
export function runPythonChild(
  python: string,
  script: string,
  args: Record<string, unknown>,
  { threads, blasThreads = threads }: { threads: number; blasThreads?: number },
): Measurement | null {
  const env = {
    ...process.env,
    OMP_NUM_THREADS: String(threads),
    MKL_NUM_THREADS: String(threads),
    OPENBLAS_NUM_THREADS: String(blasThreads),
  };
  const payload = JSON.stringify({ ...args, threads });
  return run(python, [`${root}bench/${script}`, payload], env, `${script} (${threads}/${blasThreads} threads)`);
}

let venvPython: string | null | undefined;

/**
 * The PyTorch 2.x + transformers + PEFT peer's interpreter: the pinned venv of reference:engine
 * (scripts/reference/engine/requirements.txt → .venv-reference-engine), made on first use; null
 * (said once on stderr) when it cannot be made.
 */
export function torchPython(): string | null {
  if (venvPython !== undefined) return venvPython;
  const made = spawnSync(
    'bash',
    [
      '-c',
      'source scripts/interop/lib.sh && ensure_venv .venv-reference-engine scripts/reference/engine/requirements.txt >&2',
    ],
    { cwd: root, encoding: 'utf8' },
  );
  venvPython = made.status === 0 ? `${root}.venv-reference-engine/bin/python` : null;
  if (venvPython === null)
    console.error(
      `PyTorch peer unavailable (could not make .venv-reference-engine):\n${made.stderr.trim().split('\n').slice(-3).join('\n')}`,
    );
  return venvPython;
}

/** Debian's python3-torch (with OpenBLAS), the tiny reference GPT's historical peer, when installed. */
export function debianTorchPython(): string | null {
  if (!existsSync('/usr/bin/python3')) return null;
  const probe = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { encoding: 'utf8' });
  return probe.status === 0 ? '/usr/bin/python3' : null;
}
