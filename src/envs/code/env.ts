/**
 * Code: write a JavaScript function from a one-line spec; the answer is the code,
 * `<answer>function add(a, b) { return a + b; }</answer>`. It runs in the sandbox (a separate
 * node process in its own network and PID namespaces, under the permission model, memory and
 * time limits, inside a `vm` context — sandbox/, docs/sandboxing.md) against the task's unit
 * tests; a sandbox failure scores 0 with the reason shown. Reward (rewards.ts) = fraction of tests
 * passed; success = all passed. −formatPenalty per invalid turn.
 *
 * Tasks (tasks.ts, 57) are split by index so held-out seeds see held-out tasks: index % 10 = 0
 * → test, = 1 → validation, the rest → train.
 */
import { z } from 'zod';
import { isDeepStrictEqual } from 'node:util';
import type { Split } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import { parseOptions } from '../options.ts';
import { runFunction, type CallResult } from '../sandbox/function-runner.ts';
import { sandboxMaxWallMs } from '../sandbox/sandbox.ts';
import { SandboxRuns } from '../sandbox/sandbox-runs.ts';
import { SPLIT_SIZE, splitOfSeed } from '../split.ts';
import { ToolTaskEnv, toolTaskOptionsShape, type ToolTaskEpisode, type Verdict } from '../tool-task.ts';
import { codeTaskSchema, readCodeTask } from './code-task-schema.ts';
import { codeRubric } from './rewards.ts';
import { codeTasks, type CodeTask } from './tasks.ts';

export const codeOptionsSchema = z.strictObject({
  ...toolTaskOptionsShape,
  maxTurns: z.number().int().positive().default(2),
  /** CPU time per test call in the sandbox (ms). */
  callTimeoutMs: z.number().int().positive().max(10_000).default(500),
  /** JS heap of the sandbox process (MiB). */
  maxHeapMb: z.number().int().min(16).max(1024).default(64),
  /** Sandbox isolation: 'namespaces' (own network + PID namespaces; refused where Linux cannot make them) or 'process-only' (weaker, opt-in; docs/sandboxing.md). */
  isolation: z.enum(['namespaces', 'process-only']).default('namespaces'),
  /** Most unit tests a task given to `reset` may have (codeTaskSchema); the shipped tasks have 4–8. */
  maxTests: z.number().int().min(1).max(1000).default(100),
  /** Wall time of one scoring run at most (ms), whatever the test count (the sandbox's own cap: sandboxMaxWallMs). */
  maxWallMs: z.number().int().positive().max(sandboxMaxWallMs).default(20_000),
});
export type CodeOptions = z.input<typeof codeOptionsSchema>;

/** `observation.data`: what the agent may see of the task — its id, signature and spec. */
export interface CodeData {
  task: Pick<CodeTask, 'id' | 'signature' | 'spec'>;
}

/** `observation.privileged`: the task's reference solution and unit tests (for the scripted expert). */
export type CodePrivileged = Pick<CodeTask, 'solution' | 'tests'>;

export interface CodeEpisode extends ToolTaskEpisode {
  task: CodeTask;
  /** The scoring run's count (null before the answer): passed of total unit tests. */
  tests: { passed: number; total: number } | null;
}

/** The tasks a split draws from. */
export function codeTasksOf(split: Split): CodeTask[] {
  const slot = { test: 0, validation: 1 }[split as 'test' | 'validation'];
  return codeTasks.filter((_, index) => (slot === undefined ? index % 10 > 1 : index % 10 === slot));
}

/** The task of a seed: its split's tasks, in turn. */
export function codeTaskOf(seed: number): CodeTask {
  const tasks = codeTasksOf(splitOfSeed(seed));
  return at(tasks, (seed % SPLIT_SIZE) % tasks.length, 'code tasks');
}

/** Runs a solution against a task's tests: how many passed and the first failure. */
export async function scoreSolution(
  task: CodeTask,
  code: string,
  options: {
    callTimeoutMs: number;
    maxHeapMb: number;
    isolation?: 'namespaces' | 'process-only';
    maxWallMs?: number;
    signal?: AbortSignal;
  },
): Promise<{ passed: number; total: number; firstFailure: string | null }> {
  const entry = task.signature.slice(0, task.signature.indexOf('('));
  const { callTimeoutMs, maxHeapMb, isolation, maxWallMs, signal } = options;
  const run = await runFunction({
    code,
    entry,
    calls: task.tests.map(([args]) => args),
    callTimeoutMs,
    maxHeapMb,
    isolation,
    maxWallMs,
    signal,
  });
  const total = task.tests.length;
  if (run.failure !== null) return { passed: 0, total, firstFailure: run.failure };
  let passed = 0;
  let firstFailure: string | null = null;
  task.tests.forEach(([args, expected], index) => {
    const result: CallResult = run.results[index] ?? { error: 'not run' };
    if ('value' in result && isDeepStrictEqual(result.value, expected)) passed++;
    else
      firstFailure ??= `${entry}(${JSON.stringify(args).slice(1, -1)}) gave ${'error' in result ? `error ${result.error}` : JSON.stringify(result.value)}, expected ${JSON.stringify(expected)}`;
  });
  return { passed, total, firstFailure };
}

export class CodeEnv extends ToolTaskEnv<CodeTask, CodeEpisode, z.output<typeof codeOptionsSchema>> {
  readonly name = 'code';
  readonly instructions =
    'Write the JavaScript function the spec asks for. Reply <think>...</think><answer>function add(a, b) { return a + b; }</answer>. ' +
    'It runs without require, timers or I/O; reward = fraction of unit tests passed.';

  /** The tasks `reset` accepts (bounded sizes; the env server checks a client's task against it). */
  readonly taskSchema: z.ZodType<CodeTask>;
  readonly rewardComponents = codeRubric(this.options);
  /** The scoring runs in flight: `close()` kills them. */
  private readonly runs = new SandboxRuns();

  constructor(options: CodeOptions = {}) {
    super(parseOptions(codeOptionsSchema, options, 'code'));
    this.taskSchema = codeTaskSchema({ maxTests: this.options.maxTests });
  }

  /** Kills the sandbox run of a step in flight (its step ends scored 0, 'aborted'); the env stays usable. */
  async close(): Promise<void> {
    this.runs.abortAll();
  }

  protected async start(seed: number, task: CodeTask | undefined): Promise<{ episode: CodeEpisode; text: string }> {
    const chosen = task === undefined ? codeTaskOf(seed) : readCodeTask(this.taskSchema, task);
    const [args, expected] = at(chosen.tests, 0, `${chosen.id} tests`);
    const entry = chosen.signature.slice(0, chosen.signature.indexOf('('));
    const text = `Write a JavaScript function ${chosen.signature} that ${chosen.spec}\nExample: ${entry}(${JSON.stringify(args).slice(1, -1)}) returns ${JSON.stringify(expected)}`;
    return { episode: { task: chosen, tests: null, turnsUsed: 0, ended: false }, text };
  }

  protected async finish(episode: CodeEpisode, answer: string): Promise<Verdict> {
    const code = answer.replace(/^```(?:js|javascript)?\s*|```$/g, '');
    const { passed, total, firstFailure } = await scoreSolution(episode.task, code, {
      ...this.options,
      signal: this.runs.signal,
    });
    episode.tests = { passed, total };
    const text = `passed ${passed}/${total} tests${firstFailure === null ? '' : `; ${firstFailure}`}`.slice(0, 300);
    return { success: passed === total, text, info: { passed, total } };
  }

  protected data(episode: CodeEpisode): CodeData {
    const { id, signature, spec } = episode.task;
    return { task: { id, signature, spec } };
  }

  protected override privileged(episode: CodeEpisode): CodePrivileged {
    const { solution, tests } = episode.task;
    return { solution, tests };
  }
}

export function makeCode(options: CodeOptions = {}): CodeEnv {
  return new CodeEnv(options);
}
