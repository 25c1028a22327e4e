/**
 * Calls a function written by the agent on a list of argument lists, inside the sandbox process
 * (sandbox.ts: own network and PID namespaces, permission model, limits) AND inside a `vm` context with a null-prototype global: the code sees only the
 * language built-ins (no `process`, `require`, `import`, timers, `eval`/`Function` of strings),
 * every call has its own CPU timeout, and only JSON text crosses back — a thrown object with a
 * hostile getter is read inside the context, under the timeout.
 *
 *   const { results } = await runFunction({ code: 'function add(a, b) { return a + b; }', entry: 'add', calls: [[1, 2]] });
 *   // results[0] = { value: 3 }
 *
 * No failure throws: a sandbox that refuses to run (no namespaces) is `failure` too, so a caller
 * scores it 0 with the reason shown.
 */
import { InvalidArgumentError } from '../../core/index.ts';
import { SandboxUnavailableError } from './namespaces.ts';
import { entropySourcesOf, entropyUse, realmEntropySource } from './realm-entropy-source.ts';
import {
  runInSandbox,
  sandboxMaxWallMs,
  type SandboxFailure,
  type SandboxOptions,
  type SandboxResult,
} from './sandbox.ts';

export interface FunctionRunOptions {
  code: string;
  /** The function's name (a JS identifier). */
  entry: string;
  /** One argument list per call (JSON values). */
  calls: readonly unknown[][];
  /** CPU time per call (and for loading the code). Default 500. */
  callTimeoutMs?: number;
  /** Wall time for the whole process. Default 1500 + calls × callTimeoutMs, clamped to `maxWallMs`. */
  timeoutMs?: number;
  /** The hard cap on the process's wall time, whatever the number of calls (ms). Default 30 000; at most `sandboxMaxWallMs`. */
  maxWallMs?: number;
  /** Most calls in one run; more fail the run with 'input' before anything starts. Default 1000. */
  maxCalls?: number;
  /** Longest `code` (characters); a longer one fails the run with 'input'. Default 100 000. */
  maxCodeChars?: number;
  /** Largest input (bytes of the code and calls as JSON); a larger one fails with 'input'. Default 1 MiB. */
  maxInputBytes?: number;
  /** Largest output (bytes) the process may print; more kills it ('output'). Default 1 MiB. */
  maxOutputBytes?: number;
  /** JS heap (MiB). Default 64. */
  maxHeapMb?: number;
  /**
   * Makes `Math.random` and the clock repeatable inside the candidate realm: mulberry32 from `seed`,
   * a clock standing at `clockMs` (realm-entropy-source.ts). Without it they are the real ones.
   * Either way `entropyRead` reports which of them the code used.
   */
  entropy?: { seed: number; clockMs: number };
  /** Aborting it kills the run at once (sandbox.ts); the result is the failure 'aborted'. */
  signal?: AbortSignal;
  /** Process isolation (sandbox.ts). Default 'namespaces'. */
  isolation?: SandboxOptions['isolation'];
  /** The util-linux `unshare` to use (sandbox.ts). */
  unshareCommand?: string;
}

/** One call's outcome: its JSON value, or an error message. */
export type CallResult = { value: unknown } | { error: string };

export interface FunctionRunResult {
  /** Why no call ran (syntax error, no such function, process killed), or null. */
  failure: string | null;
  /** Kind of process failure when the sandbox itself failed ('unavailable': it refused to run without namespaces). */
  sandboxFailure?: SandboxFailure | 'unavailable';
  results: CallResult[];
  /** The sources of nondeterminism the code read while loading or in any call ('Math.random', the clock); empty when none. */
  entropyRead: string[];
}

const script = `
const vm = require('node:vm');
const { code, entry, calls, callTimeoutMs, entropy } = input;
const context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false }, microtaskMode: 'afterEvaluate' });
const run = (source) => vm.runInContext(source, context, { timeout: callTimeoutMs, filename: 'solution.js' });
const readEntropyUse = run(${JSON.stringify(realmEntropySource)})(entropy === null ? null : Number(entropy.seed), entropy === null ? 0 : Number(entropy.clockMs));
const describe = (error) => { try { return String(error.message).slice(0, 200); } catch { return 'error'; } };
const guarded = (body) => '(() => { try { ' + body + ' } catch (error) { try { return JSON.stringify({ error: String(error && error.message !== undefined ? error.message : error).slice(0, 200) }); } catch { return JSON.stringify({ error: "unprintable error" }); } } })()';
let failure = null;
try {
  run(code);
  if (run('typeof ' + entry) !== 'function') failure = 'no function named ' + entry;
} catch (error) {
  failure = describe(error);
}
const results = failure !== null ? [] : calls.map((args) => {
  try {
    const text = run(guarded('const value = ' + entry + '(...' + JSON.stringify(args) + '); return value === undefined ? "{}" : JSON.stringify({ value });'));
    return typeof text === 'string' ? JSON.parse(text) : { error: 'unreadable result' };
  } catch (error) {
    return { error: describe(error) };
  }
});
const entropyUse = readEntropyUse();
emit({ failure, results, entropyUse: typeof entropyUse === 'number' ? entropyUse : -1 });
`;

export async function runFunction(options: FunctionRunOptions): Promise<FunctionRunResult> {
  const { code, entry, calls, callTimeoutMs = 500, maxHeapMb = 64, maxWallMs = 30_000 } = options;
  if (!/^[A-Za-z_$][\w$]*$/.test(entry))
    throw new InvalidArgumentError(`entry must be a JavaScript identifier, got "${entry}"`, { entry });
  if (!(maxWallMs > 0 && maxWallMs <= sandboxMaxWallMs))
    throw new InvalidArgumentError(`maxWallMs must be in (0, ${sandboxMaxWallMs}], got ${maxWallMs}`, { maxWallMs });
  const overCap = capExceeded(options);
  if (overCap !== null)
    return { failure: `input: ${overCap}; nothing ran`, sandboxFailure: 'input', results: [], entropyRead: [] };
  const timeoutMs = Math.min(options.timeoutMs ?? 1500 + calls.length * callTimeoutMs, maxWallMs);
  let outcome: SandboxResult;
  try {
    outcome = await runInSandbox({
      script,
      input: { code, entry, calls, callTimeoutMs, entropy: options.entropy ?? null },
      timeoutMs,
      maxHeapMb,
      maxInputBytes: options.maxInputBytes ?? 1 << 20,
      maxOutputBytes: options.maxOutputBytes ?? 1 << 20,
      signal: options.signal,
      isolation: options.isolation,
      unshareCommand: options.unshareCommand,
    });
  } catch (error) {
    if (error instanceof SandboxUnavailableError)
      return {
        failure: `sandbox unavailable: ${error.message}`,
        sandboxFailure: 'unavailable',
        results: [],
        entropyRead: [],
      };
    throw error;
  }
  if (!outcome.ok)
    return {
      failure: `${outcome.failure}: ${outcome.message}`,
      sandboxFailure: outcome.failure,
      results: [],
      entropyRead: [],
    };
  return readRun(outcome.value, calls.length);
}

/** Which cap a run's calls or code are over (`maxCalls`, `maxCodeChars`), or null. */
function capExceeded({ code, calls, maxCalls = 1000, maxCodeChars = 100_000 }: FunctionRunOptions): string | null {
  if (calls.length > maxCalls) return `${calls.length} calls over the cap of ${maxCalls} (maxCalls)`;
  if (code.length > maxCodeChars)
    return `code of ${code.length} characters over the cap of ${maxCodeChars} (maxCodeChars)`;
  return null;
}

/** The harness's emitted value, checked: a malformed one is a failure, never trusted. */
function readRun(value: unknown, callCount: number): FunctionRunResult {
  const run = value as { failure?: unknown; results?: unknown; entropyUse?: unknown };
  if (
    run === null ||
    typeof run !== 'object' ||
    !Array.isArray(run.results) ||
    !(run.failure === null || typeof run.failure === 'string') ||
    typeof run.entropyUse !== 'number'
  ) {
    return { failure: 'malformed result from the sandbox', results: [], entropyRead: [] };
  }
  const results = run.results as unknown[];
  return {
    failure: run.failure,
    results: Array.from({ length: callCount }, (_, index) => readCallResult(results[index])),
    // -1: the reader itself was tampered with; count every source as read
    entropyRead: entropySourcesOf(run.entropyUse < 0 ? entropyUse.random | entropyUse.clock : run.entropyUse),
  };
}

/** One call's result as the candidate's realm reported it (its JSON text is the candidate's to shape): checked, never trusted. */
function readCallResult(raw: unknown): CallResult {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { error: 'unreadable result' };
  if ('error' in raw) return { error: typeof raw.error === 'string' ? raw.error.slice(0, 200) : 'unreadable error' };
  if ('value' in raw) return { value: raw.value };
  return {} as CallResult; // the function returned undefined
}
