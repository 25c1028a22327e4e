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
import { runInSandbox, type SandboxFailure, type SandboxOptions, type SandboxResult } from './sandbox.ts';

export interface FunctionRunOptions {
  code: string;
  /** The function's name (a JS identifier). */
  entry: string;
  /** One argument list per call (JSON values). */
  calls: readonly unknown[][];
  /** CPU time per call (and for loading the code). Default 500. */
  callTimeoutMs?: number;
  /** Wall time for the whole process. Default 1500 + calls × callTimeoutMs. */
  timeoutMs?: number;
  /** JS heap (MiB). Default 64. */
  maxHeapMb?: number;
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
}

const script = `
const vm = require('node:vm');
const { code, entry, calls, callTimeoutMs } = input;
const context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false }, microtaskMode: 'afterEvaluate' });
const run = (source) => vm.runInContext(source, context, { timeout: callTimeoutMs, filename: 'solution.js' });
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
emit({ failure, results });
`;

export async function runFunction(options: FunctionRunOptions): Promise<FunctionRunResult> {
  const { code, entry, calls, callTimeoutMs = 500, maxHeapMb = 64 } = options;
  if (!/^[A-Za-z_$][\w$]*$/.test(entry))
    throw new InvalidArgumentError(`entry must be a JavaScript identifier, got "${entry}"`, { entry });
  const timeoutMs = options.timeoutMs ?? 1500 + calls.length * callTimeoutMs;
  let outcome: SandboxResult;
  try {
    outcome = await runInSandbox({
      script,
      input: { code, entry, calls, callTimeoutMs },
      timeoutMs,
      maxHeapMb,
      isolation: options.isolation,
      unshareCommand: options.unshareCommand,
    });
  } catch (error) {
    if (error instanceof SandboxUnavailableError)
      return { failure: `sandbox unavailable: ${error.message}`, sandboxFailure: 'unavailable', results: [] };
    throw error;
  }
  if (!outcome.ok)
    return { failure: `${outcome.failure}: ${outcome.message}`, sandboxFailure: outcome.failure, results: [] };
  const value = outcome.value as { failure?: unknown; results?: unknown };
  if (
    value === null ||
    typeof value !== 'object' ||
    !Array.isArray(value.results) ||
    !(value.failure === null || typeof value.failure === 'string')
  ) {
    return { failure: 'malformed result from the sandbox', results: [] };
  }
  return {
    failure: value.failure,
    results: calls.map((_, index) => readCallResult((value.results as unknown[])[index])),
  };
}

/** One call's result as the candidate's realm reported it (its JSON text is the candidate's to shape): checked, never trusted. */
function readCallResult(raw: unknown): CallResult {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { error: 'unreadable result' };
  if ('error' in raw) return { error: typeof raw.error === 'string' ? raw.error.slice(0, 200) : 'unreadable error' };
  if ('value' in raw) return { value: raw.value };
  return {} as CallResult; // the function returned undefined
}
