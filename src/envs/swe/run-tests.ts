/**
 * Runs tests against a repository snapshot in the sandbox (sandbox/sandbox.ts: own net + PID
 * namespaces, permission model with no file access at all, memory and time limits). The files
 * travel on stdin; the candidate's files are compiled only into the candidate realm
 * (sandbox/copy-boundary-source.ts) and the harness (test-harness-source.ts) runs in the
 * process's own realm, out of their reach.
 *
 * - `runTrustedTests(candidateFiles, trustedTests)`: the scoring run. The trusted test files (the
 *   instance's own, passed in by the caller) run in the harness's realm with the real
 *   `node:assert` and reach candidate code only through the copy-only boundary.
 * - `runRepoTests(files)`: the agent's `run_tests`: the snapshot's own `*.test.js` files run
 *   entirely inside the candidate realm. Its result is only an observation.
 *
 * Each outcome carries `testId` = sha256(test file content) + ":" + test name, so a test is
 * known by what it is, not by a name anyone can reuse. Every failure (timeout, crash, malformed
 * result, sandbox unavailable) comes back as `failure`, never as a throw.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { InvalidArgumentError } from '../../core/errors.ts';
import { entry } from '../../core/indexing.ts';
import { candidateAssertSource } from '../sandbox/candidate-assert-source.ts';
import { candidateRealmSource } from '../sandbox/copy-boundary-source.ts';
import { SandboxUnavailableError } from '../sandbox/namespaces.ts';
import { runInSandbox, type SandboxResult } from '../sandbox/sandbox.ts';
import { testHarnessSource } from './test-harness-source.ts';

export interface TestOutcome {
  file: string;
  name: string;
  /** sha256 of the test file's content, ":", the test's name. */
  testId: string;
  pass: boolean;
  error?: string;
}

export interface RepoTestRun {
  /** Why the test process itself failed (timeout, memory, crash, malformed result, no sandbox), or null. */
  failure: string | null;
  outcomes: TestOutcome[];
}

export interface TestRunOptions {
  /** Wall-clock limit of the whole run (ms). Default 5000. */
  timeoutMs?: number;
  /** CPU limit of each crossing into candidate code (loading a module, one call) (ms). Default 1000. */
  callTimeoutMs?: number;
  /** Sandbox isolation (sandbox/sandbox.ts). Default 'namespaces'. */
  isolation?: 'namespaces' | 'process-only';
  /** Kills the run when it aborts (the env's `close()`); the run's failure is then 'aborted'. */
  signal?: AbortSignal;
}

const harnessResultSchema = z.strictObject({
  failure: z.string().nullable(),
  outcomes: z
    .array(z.strictObject({ file: z.string(), name: z.string(), pass: z.boolean(), error: z.string().optional() }))
    .max(10_000),
});

/** The identity of a test: its file's content hash and its name. */
export function testId(fileContent: string, name: string): string {
  return `${createHash('sha256').update(fileContent).digest('hex')}:${name}`;
}

function checkPaths(files: Record<string, string>): void {
  for (const path of Object.keys(files)) {
    if (path.startsWith('/') || path.split('/').some((part) => part === '..' || part === '.' || part === '')) {
      throw new InvalidArgumentError(`path escapes the repository or is not normalised: ${path}`, { path });
    }
  }
}

async function runHarness(
  candidateFiles: Record<string, string>,
  tests: Array<{ file: string; source?: string }>,
  contents: Record<string, string>,
  options: TestRunOptions,
): Promise<RepoTestRun> {
  checkPaths(candidateFiles);
  const input = {
    candidateFiles,
    tests,
    callTimeoutMs: options.callTimeoutMs ?? 1000,
    assertSource: candidateAssertSource,
  };
  let result: SandboxResult;
  try {
    result = await runInSandbox({
      script: candidateRealmSource + testHarnessSource,
      input,
      timeoutMs: options.timeoutMs ?? 5000,
      maxHeapMb: 96,
      isolation: options.isolation,
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof SandboxUnavailableError)
      return { failure: `sandbox unavailable: ${error.message}`, outcomes: [] };
    throw error;
  }
  if (!result.ok) return { failure: `${result.failure}: ${result.message}`, outcomes: [] };
  const parsed = harnessResultSchema.safeParse(result.value);
  if (!parsed.success) return { failure: 'malformed test result', outcomes: [] };
  const outcomes = parsed.data.outcomes.map((outcome) => ({
    ...outcome,
    testId: testId(contents[outcome.file] ?? '', outcome.name),
  }));
  return { failure: parsed.data.failure, outcomes };
}

/** The scoring run: `trustedTests` (path → content, from the instance data) against the candidate's files. */
export async function runTrustedTests(
  candidateFiles: Record<string, string>,
  trustedTests: Record<string, string>,
  options: TestRunOptions = {},
): Promise<RepoTestRun> {
  checkPaths(trustedTests);
  const tests = Object.keys(trustedTests)
    .sort()
    .map((file) => ({ file, source: entry(trustedTests, file, 'trusted test file') }));
  return runHarness(candidateFiles, tests, trustedTests, options);
}

/** The snapshot's own `*.test.js` files (or those in `testFiles`), run inside the candidate realm. */
export async function runRepoTests(
  files: Record<string, string>,
  options: TestRunOptions & { testFiles?: string[] } = {},
): Promise<RepoTestRun> {
  const testFiles =
    options.testFiles ??
    Object.keys(files)
      .filter((path) => path.endsWith('.test.js'))
      .sort();
  return runHarness(
    files,
    testFiles.map((file) => ({ file })),
    files,
    options,
  );
}

/** One line per run: "3 passed, 1 failed: name (message)". */
export function summarizeRun(run: RepoTestRun): string {
  if (run.failure !== null) return `tests did not run: ${run.failure}`;
  const failed = run.outcomes.filter((outcome) => !outcome.pass);
  const passed = run.outcomes.length - failed.length;
  return `${passed} passed, ${failed.length} failed${failed.length === 0 ? '' : `: ${failed.map((f) => `${f.name} (${f.error})`).join('; ')}`}`;
}
