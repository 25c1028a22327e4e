/**
 * Runs a repository snapshot's tests in the sandbox: the files are written to a fresh temporary
 * folder, a sandboxed node process (reads allowed in that folder only, no network, no child
 * processes, memory and time limits) `require`s each test file and calls every exported test,
 * and the folder is removed afterwards. A test file exports `{ 'test name': () => { … } }`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runInSandbox } from '../sandbox/sandbox.ts';
import { InvalidArgumentError } from '../../core/errors.ts';

export interface TestOutcome {
  file: string;
  name: string;
  pass: boolean;
  error?: string;
}

export interface RepoTestRun {
  /** Why the test process itself failed (timeout, memory, crash), or null. */
  failure: string | null;
  outcomes: TestOutcome[];
}

const harness = `
const path = require('node:path');
(async () => {
  const outcomes = [];
  const message = (error) => { try { return String(error && error.message !== undefined ? error.message : error).replace(/\\s+/g, ' ').slice(0, 160); } catch { return 'error'; } };
  for (const file of input.testFiles) {
    let tests;
    try { tests = require(path.join(input.root, file)); } catch (error) { outcomes.push({ file, name: '(load)', pass: false, error: message(error) }); continue; }
    for (const [name, run] of Object.entries(tests)) {
      try { await run(); outcomes.push({ file, name, pass: true }); } catch (error) { outcomes.push({ file, name, pass: false, error: message(error) }); }
    }
  }
  emit(outcomes);
})();
`;

/** Runs the `*.test.js` files of `files` (all, or those named in `testFiles`). */
export async function runRepoTests(files: Record<string, string>, options: { testFiles?: string[]; timeoutMs?: number } = {}): Promise<RepoTestRun> {
  const root = mkdtempSync(join(tmpdir(), 'agentrl-swe-'));
  try {
    for (const [path, content] of Object.entries(files)) {
      const target = join(root, path);
      if (!target.startsWith(root + '/')) throw new InvalidArgumentError(`path escapes the repository: ${path}`, { path });
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    }
    const testFiles = options.testFiles ?? Object.keys(files).filter((path) => path.endsWith('.test.js')).sort();
    const result = await runInSandbox({ script: harness, input: { root, testFiles }, allowRead: [root], timeoutMs: options.timeoutMs ?? 5000 });
    if (!result.ok) return { failure: `${result.failure}: ${result.message}`, outcomes: [] };
    return { failure: null, outcomes: result.value as TestOutcome[] };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** One line per run: "3 passed, 1 failed: name (message)". */
export function summarizeRun(run: RepoTestRun): string {
  if (run.failure !== null) return `tests did not run: ${run.failure}`;
  const failed = run.outcomes.filter((outcome) => !outcome.pass);
  const passed = run.outcomes.length - failed.length;
  return `${passed} passed, ${failed.length} failed${failed.length === 0 ? '' : ': ' + failed.map((f) => `${f.name} (${f.error})`).join('; ')}`;
}
