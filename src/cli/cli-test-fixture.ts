/** The `agentrl` command line as the CLI tests run it: a child process of bin/agentrl.js. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const agentrlBin = fileURLToPath(new URL('../../bin/agentrl.js', import.meta.url));

/** Runs `agentrl …args` to its end; resolves with its exit code and output. */
export function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [agentrlBin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
