/**
 * Runs untrusted JavaScript in a separate, locked-down node process:
 *
 * - Linux namespaces (namespaces.ts): a fresh network namespace (no network of any protocol) and
 *   PID namespace (no other process can be seen or signalled), in a new session and process
 *   group of its own (so even `kill(0)` reaches nothing outside). Where namespaces cannot be
 *   created the call throws `SandboxUnavailableError` — unless the caller passes
 *   `isolation: 'process-only'` and accepts the weaker walls below alone;
 * - node's permission model (`--experimental-permission`, Node 20): no file-system reads or
 *   writes except the directories in `allowRead`, no child processes, no worker threads, no
 *   native addons, no `process.binding`;
 * - no network: the prelude replaces every socket entry point (net, tls, dgram, dns, http(s),
 *   http2) with a function that throws, and removes `fetch`, `WebSocket`, `EventSource` — before
 *   any untrusted code runs;
 * - memory: `--max-old-space-size` caps the JS heap, `ulimit -v` the whole address space
 *   (typed arrays included); `ulimit -t` caps CPU seconds;
 * - time: coreutils `timeout` SIGKILLs the process after the wall-clock limit even if the trainer
 *   died first; the parent SIGKILLs the process group (and so everything it runs) after `timeoutMs`
 *   of wall time (at most `sandboxMaxWallMs`) or when `signal` aborts; input is capped at
 *   `maxInputBytes` (nothing runs beyond it), output at `maxOutputBytes`;
 * - files: the process starts in a fresh scratch folder of its own (its cwd, removed after the
 *   run), node's trace and diagnostic files go there, core dumps are off, and `trace_events` is
 *   denied like the sockets: nothing lands in the trainer's working folder.
 *
 * The script reads its input as `input` (JSON from stdin) and ends with `emit(value)` (JSON back
 * to the parent). The result carries a per-run random nonce that the prelude reads from stdin
 * and keeps in a closure: the parent accepts only a result line with that nonce, so output
 * printed by anything else in the process is never taken for the result. The script itself is
 * trusted; untrusted code runs inside a `vm` realm it builds (function-runner.ts,
 * candidate-realm.ts), so it cannot reach `process`, `emit` or the nonce at all.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { constants as osConstants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from '../../core/errors.ts';
import { namespacePrefix } from './namespaces.ts';

export interface SandboxOptions {
  /** The script (CommonJS, `-e`), run after the lock-down prelude; it calls `emit(value)`. */
  script: string;
  /** JSON value the script reads as `input`. */
  input: unknown;
  /** Wall-clock limit; the process is killed after it. Default 3000; at most `sandboxMaxWallMs` (a larger one throws `InvalidArgumentError`). */
  timeoutMs?: number;
  /** Largest input (bytes of its JSON) accepted; a larger one fails with 'input' and nothing runs. Default 16 MiB. */
  maxInputBytes?: number;
  /** Aborting it kills the run's whole process group at once (failure 'aborted'): how an env's `close()` stops its work. */
  signal?: AbortSignal;
  /** JS heap limit (MiB). Default 64. */
  maxHeapMb?: number;
  /** Address-space limit (MiB) for everything the process maps. Default 1024. */
  maxAddressSpaceMb?: number;
  /** Directories (absolute) the script may read. Default none. */
  allowRead?: readonly string[];
  /** Largest stdout kept; the process is killed beyond it. Default 1 MiB. */
  maxOutputBytes?: number;
  /**
   * 'namespaces' (default): fresh network and PID namespaces, or a `SandboxUnavailableError` when
   * they cannot be created. 'process-only': the permission model, socket stubs and limits only —
   * a weaker sandbox the caller opts into (docs/sandboxing.md says what it does not stop).
   */
  isolation?: 'namespaces' | 'process-only';
  /** The util-linux `unshare` to use. Default `unshare` on PATH. */
  unshareCommand?: string;
}

export type SandboxFailure = 'timeout' | 'memory' | 'output' | 'crash' | 'no-result' | 'input' | 'aborted';

/** The hard cap on one run's wall-clock limit (ms): a longer `timeoutMs` is refused, whatever the caller computed. */
export const sandboxMaxWallMs = 120_000;

export type SandboxResult =
  | { ok: true; value: unknown; durationMs: number }
  | { ok: false; failure: SandboxFailure; message: string; durationMs: number };

const marker = '\u0000SANDBOX-RESULT\u0000';

const prelude = `'use strict';
{
  const deny = (what) => function denied() { throw new Error('network access is denied in the sandbox (' + what + ')'); };
  const net = require('node:net'), tls = require('node:tls'), dgram = require('node:dgram'), dns = require('node:dns');
  const http = require('node:http'), https = require('node:https'), http2 = require('node:http2');
  net.connect = net.createConnection = net.Socket.prototype.connect = deny('net');
  net.createServer = net.Server.prototype.listen = deny('listen');
  tls.connect = deny('tls');
  dgram.createSocket = deny('udp');
  for (const key of ['lookup', 'lookupService', 'resolve', 'resolve4', 'resolve6', 'resolveAny', 'reverse']) { dns[key] = deny('dns'); dns.promises[key] = deny('dns'); }
  http.request = http.get = https.request = https.get = http2.connect = deny('http');
  http.createServer = https.createServer = http2.createServer = deny('listen');
  for (const key of ['fetch', 'WebSocket', 'EventSource', 'Request', 'Response']) delete globalThis[key];
  require('node:trace_events').createTracing = () => { throw new Error('tracing is denied in the sandbox'); };
}
const { input, emit } = (() => {
  const { nonce, input } = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
  const write = process.stdout.write.bind(process.stdout), exit = process.exit.bind(process), stringify = JSON.stringify;
  return { input, emit: (value) => { write(${JSON.stringify(marker)} + nonce + stringify(value) + '\\n', () => exit(0)); } };
})();
`;

/** Runs `script` in a sandboxed process; throws `SandboxUnavailableError` when the asked isolation cannot be had. */
/** Runs `script` in a sandboxed process; throws `SandboxUnavailableError` when the asked isolation cannot be had. */
export async function runInSandbox(options: SandboxOptions): Promise<SandboxResult> {
  const { script, input, maxHeapMb = 64, maxAddressSpaceMb = 1024, allowRead = [], maxOutputBytes = 1 << 20 } = options;
  const timeoutMs = checkedTimeout(options.timeoutMs ?? 3000);
  const refused = refusalOf(options, input);
  if (refused !== null) return refused;
  const isolation = options.isolation === 'process-only' ? [] : namespacePrefix(options.unshareCommand);
  const nonce = randomBytes(16).toString('hex');
  const cpuSeconds = Math.ceil(timeoutMs / 1000) + 1;
  const scratch = await mkdtemp(join(tmpdir(), 'agentrl-sandbox-run-'));
  const started = performance.now();
  try {
    const nodeArgs = [
      '--experimental-permission',
      ...allowRead.map((dir) => `--allow-fs-read=${dir}`),
      `--max-old-space-size=${maxHeapMb}`,
      // anything node itself would write (a trace, a report) lands in the scratch folder, removed below
      `--trace-event-file-pattern=${join(scratch, 'node-trace.log')}`,
      `--diagnostic-dir=${scratch}`,
      '--no-warnings',
      '-e',
      prelude + script,
    ];
    // coreutils `timeout` outlives the trainer: a process that blocks without CPU (past `ulimit -t`)
    // is killed at the wall-clock limit even when nobody is left to call `kill` below.
    const command = ['timeout', '--signal=KILL', `${cpuSeconds}s`, ...isolation, process.execPath, ...nodeArgs];
    const child = spawn(
      '/bin/sh',
      [
        '-c',
        `ulimit -c 0 && ulimit -v ${maxAddressSpaceMb * 1024} && ulimit -t ${cpuSeconds} && exec "$0" "$@"`,
        ...command,
      ],
      {
        cwd: scratch, // its own folder: nothing it writes lands in the trainer's working folder
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: '/usr/bin:/bin' },
        detached: true, // setsid: its own session and process group, so kill(0) inside reaches nothing of ours
      },
    );
    const finished = await watchRun(child, { nonce, input, timeoutMs, maxOutputBytes, signal: options.signal });
    const durationMs = performance.now() - started;
    return resultOf(
      { ...finished, durationMs, resultMarker: marker + nonce },
      { timeoutMs, maxOutputBytes, maxHeapMb, cpuSeconds },
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The run's wall-clock limit, or a typed error when it is not a positive number of ms within `sandboxMaxWallMs`. */
function checkedTimeout(timeoutMs: number): number {
  if (!(timeoutMs > 0 && timeoutMs <= sandboxMaxWallMs))
    throw new InvalidArgumentError(
      `timeoutMs must be a number of ms in (0, ${sandboxMaxWallMs}] (sandboxMaxWallMs), got ${timeoutMs}`,
      { timeoutMs, max: sandboxMaxWallMs },
    );
  return timeoutMs;
}

/** A failure without starting anything: an input over `maxInputBytes`, or a signal already aborted. */
function refusalOf(options: SandboxOptions, input: unknown): SandboxResult | null {
  const { maxInputBytes = 16 << 20, signal } = options;
  if (signal?.aborted) return { ok: false, failure: 'aborted', message: 'aborted before it started', durationMs: 0 };
  const bytes = Buffer.byteLength(JSON.stringify(input) ?? 'null');
  if (bytes > maxInputBytes)
    return {
      ok: false,
      failure: 'input',
      message: `input of ${bytes} bytes over the limit of ${maxInputBytes} (maxInputBytes); nothing ran`,
      durationMs: 0,
    };
  return null;
}

/** Feeds the child its input and waits for it to close, killing its whole process group at the limits or on abort. */
async function watchRun(
  child: ChildProcessWithoutNullStreams,
  watch: { nonce: string; input: unknown; timeoutMs: number; maxOutputBytes: number; signal?: AbortSignal },
): Promise<Omit<FinishedRun, 'durationMs' | 'resultMarker'>> {
  let stdout = '';
  let stderr = '';
  let killedFor: SandboxFailure | null = null;
  const kill = (why: SandboxFailure): void => {
    if (killedFor === null) killedFor = why;
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL'); // the whole group
    } catch {
      child.kill('SIGKILL');
    }
  };
  const timer = setTimeout(() => kill('timeout'), watch.timeoutMs);
  const onAbort = (): void => kill('aborted');
  watch.signal?.addEventListener('abort', onAbort, { once: true });
  if (watch.signal?.aborted) onAbort(); // aborted while the scratch folder was being made
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (stdout.length > watch.maxOutputBytes) kill('output');
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 64 * 1024) stderr += chunk;
  });
  child.stdin.on('error', () => {}); // the child may exit before reading its input
  child.stdin.end(JSON.stringify({ nonce: watch.nonce, input: watch.input }));
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  clearTimeout(timer);
  watch.signal?.removeEventListener('abort', onAbort);
  return { stdout, stderr, exit, killedFor };
}

/** What a finished sandbox process left: its output, how it exited and why it was killed, if it was. */
interface FinishedRun {
  stdout: string;
  stderr: string;
  exit: { code: number | null; signal: NodeJS.Signals | null };
  killedFor: SandboxFailure | null;
  durationMs: number;
  /** The marker and nonce the script's `emit` writes before its result. */
  resultMarker: string;
}

/** The result a finished run reads as: its emitted value, or the limit it hit, or how it crashed. */
function resultOf(
  { stdout, stderr, exit, killedFor, durationMs, resultMarker }: FinishedRun,
  limits: { timeoutMs: number; maxOutputBytes: number; maxHeapMb: number; cpuSeconds: number },
): SandboxResult {
  const { timeoutMs, maxOutputBytes, maxHeapMb, cpuSeconds } = limits;
  if (killedFor === 'aborted')
    return { ok: false, failure: 'aborted', message: 'aborted (the env was closed)', durationMs };
  if (killedFor === 'timeout')
    return { ok: false, failure: 'timeout', message: `killed after ${timeoutMs} ms`, durationMs };
  if (killedFor === 'output')
    return { ok: false, failure: 'output', message: `output over ${maxOutputBytes} bytes`, durationMs };
  const at = stdout.indexOf(resultMarker);
  if (at >= 0 && exit.code === 0) {
    try {
      return {
        ok: true,
        value: JSON.parse(stdout.slice(at + resultMarker.length).split('\n', 1)[0] ?? ''),
        durationMs,
      };
    } catch {
      return { ok: false, failure: 'no-result', message: 'unreadable result', durationMs };
    }
  }
  if (/out of memory|OOM|allocation failed|Cannot allocate|bad_alloc/i.test(stderr)) {
    return { ok: false, failure: 'memory', message: `memory limit reached (heap ${maxHeapMb} MiB)`, durationMs };
  }
  // Killed by a signal: directly, or reported by `timeout` as 128 + the signal's number (124: its own limit).
  const killedBy = (name: 'SIGXCPU' | 'SIGKILL') =>
    exit.signal === name || exit.code === 128 + osConstants.signals[name];
  if (killedBy('SIGXCPU') || killedBy('SIGKILL') || exit.code === 124)
    return { ok: false, failure: 'timeout', message: `CPU limit (${cpuSeconds} s) reached`, durationMs };
  const lines = stderr.trim().split('\n');
  const lastLine = lines.find((line) => /^\w*Error\b/.test(line)) ?? lines.pop() ?? '';
  return {
    ok: false,
    failure: 'crash',
    message: `exited with ${exit.code ?? exit.signal}: ${lastLine.slice(0, 200)}`,
    durationMs,
  };
}
