/** The `agentrl` command line as the CLI tests run it: a child process of bin/agentrl.js. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const agentrlBin = fileURLToPath(new URL('../../bin/agentrl.js', import.meta.url));

/** Runs `agentrl …args` to its end (`env` added to this process's environment); resolves with its exit code and output. */
export function runCli(
  args: string[],
  { env = {} }: { env?: Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [agentrlBin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** A bandit model and budget small enough for `agentrl train` to take seconds. */
const tinyTrain: Record<string, string | number> = {
  env: 'bandit',
  seed: 1,
  demonstrations: 16,
  'sft-steps': 12,
  'hidden-size': 32,
  'num-layers': 1,
  'num-heads': 2,
  'num-kv-heads': 1,
  'intermediate-size': 64,
  'max-seq-len': 64,
  'tasks-per-iteration': 2,
  'group-size': 4,
  'max-turns': 1,
  'max-new-tokens': 24,
  'test-episodes': 4,
  'validate-every': 0,
  'validation-episodes': 4,
  'checkpoint-every': 0,
};

/** The tiny run's flags, `overrides` (flag names without `--`) replacing or adding to them. */
export function tinyTrainFlags(overrides: Record<string, string | number> = {}): string[] {
  return Object.entries({ ...tinyTrain, ...overrides }).flatMap(([name, value]) => [`--${name}`, String(value)]);
}

/**
 * Starts `agentrl …args` (a server), waits for the URL it prints on stderr, runs `check` with it,
 * then stops it with SIGTERM; resolves with the exit code. A server that exits first rejects with its output.
 */
export async function whileServing(
  args: string[],
  check: (url: string) => Promise<void>,
  { env = {} }: { env?: Record<string, string> } = {},
): Promise<number | null> {
  const child = spawn(process.execPath, [agentrlBin, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = / on (http:\/\/[0-9.:]+)/.exec(output);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`agentrl ${args.join(' ')} exited ${code}: ${output}`)));
  });
  try {
    await check(url);
  } finally {
    child.kill('SIGTERM');
  }
  return exited;
}
