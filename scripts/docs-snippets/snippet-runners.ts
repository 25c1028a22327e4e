/**
 * Runs documented snippets as a reader would: a shell command through bash in a working folder of
 * its own (with `agentrl` on PATH as this checkout's bin/agentrl.js, HOME and the model cache inside
 * that folder), a TypeScript file through node + tsx, a server until it answers HTTP and then SIGINT.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { InvalidArgumentError } from '../../src/core/errors.ts';

export const repository = resolve(import.meta.dirname, '..', '..');
const tsxLoader = import.meta.resolve('tsx');

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  /** Killed at the time limit. */
  timedOut: boolean;
}

/** The environment a snippet runs in: `agentrl` on PATH, HOME and AGENTRL_CACHE under `folder`. */
export async function snippetEnvironment(folder: string): Promise<NodeJS.ProcessEnv> {
  const bin = join(folder, '.bin');
  await mkdir(bin, { recursive: true });
  await mkdir(join(folder, '.home'), { recursive: true });
  const shim = join(bin, 'agentrl');
  await writeFile(shim, `#!/bin/sh\nexec "${process.execPath}" "${join(repository, 'bin', 'agentrl.js')}" "$@"\n`);
  await chmod(shim, 0o755);
  const {
    NODE_TEST_CONTEXT: _context,
    OPENAI_BASE_URL: _url,
    AGENTRL_CHECKPOINT: _checkpoint,
    NODE_OPTIONS: _options,
    ...inherited
  } = process.env;
  return {
    ...inherited,
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: join(folder, '.home'),
    AGENTRL_CACHE: join(folder, '.home', 'agentrl-cache'),
  };
}

interface Spawned {
  child: ChildProcess;
  output: () => string;
  finished: Promise<Finished>;
}

/** SIGKILLs `child` and whatever it started (it leads its own process group). */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group has already exited
  }
}

/** Starts `argv` in `cwd`; it is SIGKILLed (with its group) after `limitMs`. */
function start(argv: string[], cwd: string, env: NodeJS.ProcessEnv, limitMs: number): Spawned {
  const [command = 'bash', ...args] = argv;
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, limitMs);
  const finished = new Promise<Finished>((done) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, output, timedOut });
    }),
  );
  return { child, output: () => output, finished };
}

/** Runs a shell command to its end; with `interruptWhen`, sends SIGINT once the output matches. */
export function runShell(
  command: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; limitMs: number; interruptWhen?: RegExp },
): Promise<Finished> {
  const spawned = start(['bash', '-c', `exec ${command}`], options.cwd, options.env, options.limitMs);
  const { interruptWhen } = options;
  if (interruptWhen !== undefined) {
    const watch = () => {
      if (interruptWhen.test(spawned.output())) {
        spawned.child.kill('SIGINT');
        spawned.child.stdout?.off('data', watch);
        spawned.child.stderr?.off('data', watch);
      }
    };
    spawned.child.stdout?.on('data', watch);
    spawned.child.stderr?.on('data', watch);
  }
  return spawned.finished;
}

/** Runs a TypeScript file with node + tsx (what `npx tsx file` does), or node's test runner on it. */
export function runTypeScript(
  file: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; limitMs: number; test?: boolean },
): Promise<Finished> {
  const argv = [process.execPath, '--import', tsxLoader, ...(options.test === true ? ['--test'] : []), file];
  return start(argv, options.cwd, options.env, options.limitMs).finished;
}

export interface RunningServer {
  stop(): Promise<Finished>;
}

/** Starts a server command and waits until `port` answers HTTP; fails with its output if it exits first. */
export async function startServer(
  command: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; port: number; limitMs: number },
): Promise<RunningServer> {
  const spawned = start(['bash', '-c', `exec ${command}`], options.cwd, options.env, options.limitMs);
  let exited: Finished | undefined;
  void spawned.finished.then((finished) => (exited = finished));
  const deadline = Date.now() + Math.min(options.limitMs, 120_000);
  for (;;) {
    if (exited !== undefined) {
      throw new InvalidArgumentError(`${command} exited (${exited.code}) before listening:\n${exited.output}`);
    }
    if (await answers(options.port)) break;
    if (Date.now() > deadline) {
      killGroup(spawned.child);
      throw new InvalidArgumentError(`${command} did not answer on port ${options.port}:\n${spawned.output()}`);
    }
    await new Promise((wait) => setTimeout(wait, 250));
  }
  return {
    stop() {
      spawned.child.kill('SIGINT');
      return spawned.finished;
    },
  };
}

async function answers(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

/** A port nothing listens on now. */
export function freePort(): Promise<number> {
  const server = createServer();
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

/** `command` with each budget flag set: an existing `--flag value` gets the budget's value, a missing one is added. */
export function withBudget(command: string, budget: Record<string, string> = {}): string {
  let text = command;
  for (const [flag, value] of Object.entries(budget)) {
    const present = new RegExp(`(\\s${flag})(\\s+|=)\\S+`);
    text = present.test(text) ? text.replace(present, `$1$2${value}`) : `${text} ${flag} ${value}`;
  }
  return text;
}
