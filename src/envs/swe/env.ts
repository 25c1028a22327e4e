/**
 * Software fix (SWE-bench-style instance (P, C, T, δ), instances.ts): the agent gets the issue
 * text P and works on the repository snapshot C with tools —
 *
 *   list_files {}                               → the paths
 *   read_file {"path"}                          → the file with line numbers
 *   search {"text"}                             → matching lines, "path:line: text"
 *   edit_file {"path", "old", "new"}            → replaces the one exact occurrence of old
 *   run_tests {}                                → the visible tests' results, run in the sandbox
 *
 * and submits with `<answer>submit</answer>`. Scoring runs the instance's own test files — the
 * hidden tests T and the original visible (pass-to-pass) files, never the agent's edited copies —
 * in the sandbox, with the agent's source files in a separate realm behind a copy-only boundary
 * (run-tests.ts): reward 1 when every fail-to-pass test now passes and every pass-to-pass test
 * still passes (tests known by content hash + name), else 0. Any failure of the run (timeout,
 * crash, malformed result, no sandbox) is a 0-reward final step that says why.
 * −formatPenalty per invalid turn; truncated after `maxTurns`.
 * The instances are few, so every split draws from all of them (seed mod count).
 */
import { z } from 'zod';
import type { Tool } from '../../core/index.ts';
import { tool } from '../../core/tool.ts';
import { parseOptions } from '../options.ts';
import { SPLIT_SIZE } from '../split.ts';
import { SandboxRuns } from '../sandbox/sandbox-runs.ts';
import { ToolTaskEnv, toolTaskOptionsShape, type ToolTaskEpisode, type Verdict } from '../tool-task.ts';
import { answerRubric } from '../tool-task-rewards.ts';
import { sweInstances, type SweInstance, type TestRef } from './instances.ts';
import {
  runRepoTests,
  runTrustedTests,
  summarizeRun,
  testId,
  type RepoTestRun,
  type TestRunOptions,
} from './run-tests.ts';
import { ToolError } from '../../core/errors.ts';
import { at, entry } from '../../core/indexing.ts';

export const sweOptionsSchema = z.strictObject({
  ...toolTaskOptionsShape,
  maxTurns: z.number().int().positive().default(12),
  maxToolResultChars: z.number().int().positive().default(1200),
  /** Wall-clock limit of one test run (ms). */
  testTimeoutMs: z.number().int().positive().max(60_000).default(5000),
  /** Sandbox isolation: 'namespaces' (own network + PID namespaces; refused where Linux cannot make them) or 'process-only' (weaker, opt-in; docs/sandboxing.md). */
  isolation: z.enum(['namespaces', 'process-only']).default('namespaces'),
});
export type SweOptions = z.input<typeof sweOptionsSchema>;

/** `observation.data`: what the agent may see — the instance's id, issue and repository snapshot, edits made, tests run. */
export interface SweData {
  instance: Pick<SweInstance, 'id' | 'issue' | 'files'>;
  editsMade: number;
  testRuns: number;
}

/** `observation.privileged`: the gold patch, the hidden tests and which of them must pass (for the scripted expert). */
export type SwePrivileged = Pick<SweInstance, 'goldPatch' | 'hiddenTests' | 'failToPass'>;

interface SweEpisode extends ToolTaskEpisode {
  instance: SweInstance;
  files: Record<string, string>;
  editsMade: number;
  testRuns: number;
}

/** The instance's own test files that scoring runs: the hidden tests and the original visible files (path → content). */
export function trustedTestsOf(instance: SweInstance): Record<string, string> {
  const tests: Record<string, string> = {};
  for (const { file } of instance.passToPass) tests[file] = entry(instance.files, file, `${instance.id} file`);
  return { ...tests, ...instance.hiddenTests };
}

/** Whether a test run resolves the instance: all fail-to-pass and pass-to-pass tests pass, each known by its file's content hash and name. */
export function resolves(
  instance: SweInstance,
  run: RepoTestRun,
): { resolved: boolean; failToPass: number; passToPass: number } {
  const trusted = trustedTestsOf(instance);
  const passing = new Set(run.outcomes.filter((outcome) => outcome.pass).map((outcome) => outcome.testId));
  const passes = (test: TestRef) => {
    const source = trusted[test.file];
    return source !== undefined && passing.has(testId(source, test.name));
  };
  const failToPass = instance.failToPass.filter(passes).length;
  const passToPass = instance.passToPass.filter(passes).length;
  return {
    resolved:
      run.failure === null && failToPass === instance.failToPass.length && passToPass === instance.passToPass.length,
    failToPass,
    passToPass,
  };
}

/** Scores a repository snapshot against an instance: its trusted tests run on the snapshot's source. */
export async function evaluateSubmission(
  instance: SweInstance,
  files: Record<string, string>,
  options: TestRunOptions = {},
): Promise<{ run: RepoTestRun; resolved: boolean; failToPass: number; passToPass: number }> {
  const run = await runTrustedTests(files, trustedTestsOf(instance), options);
  return { run, ...resolves(instance, run) };
}

/** Applies exact find → replace edits (each `find` must occur exactly once); throws naming the bad edit. */
export function applyEdit(files: Record<string, string>, path: string, find: string, replace: string): void {
  const content = files[path];
  if (content === undefined) throw new ToolError('edit_file', `no file ${path}; see list_files`, { path });
  if (find === '') throw new ToolError('edit_file', 'old text is empty', { path });
  const count = content.split(find).length - 1;
  if (count !== 1)
    throw new ToolError('edit_file', `old text found ${count} times in ${path}; it must occur exactly once`);
  files[path] = content.replace(find, () => replace);
}

export class SweEnv extends ToolTaskEnv<SweInstance, SweEpisode, z.output<typeof sweOptionsSchema>> {
  readonly name = 'swe';
  /** The sandbox runs in flight: `close()` kills them. */
  private readonly runs = new SandboxRuns();
  /** R = solved (resolved: outcome) − formatPenalty · invalid_action (penalty). */
  readonly rewardComponents = answerRubric<SweEpisode>(this.options.formatPenalty);
  readonly instructions =
    'Fix the issue in the repository. Tools: list_files {}, read_file {"path"}, search {"text"}, edit_file {"path", "old", "new"}, run_tests {}. ' +
    'Call one per turn: <tool_call>{"name": "read_file", "arguments": {"path": "src/x.js"}}</tool_call>. When done, reply <answer>submit</answer>.';

  constructor(options: SweOptions = {}) {
    super(parseOptions(sweOptionsSchema, options, 'swe'));
    const files = () => this.current().files;
    const tools: Tool[] = [
      tool({
        name: 'list_files',
        description: 'Lists the repository files.',
        inputSchema: z.strictObject({}),
        execute: () => Object.keys(files()).sort().join('\n'),
      }),
      tool({
        name: 'read_file',
        description: 'Shows a file with line numbers.',
        inputSchema: z.strictObject({ path: z.string() }),
        execute: ({ path }) => {
          const content = files()[path];
          if (content === undefined) throw new ToolError('read_file', `no file ${path}; see list_files`, { path });
          return content
            .split('\n')
            .map((line, i) => `${i + 1}: ${line}`)
            .join('\n');
        },
      }),
      tool({
        name: 'search',
        description: 'Finds lines containing the text.',
        inputSchema: z.strictObject({ text: z.string().min(1) }),
        execute: ({ text }) => {
          const hits = Object.entries(files()).flatMap(([path, content]) =>
            content.split('\n').flatMap((line, i) => (line.includes(text) ? [`${path}:${i + 1}: ${line.trim()}`] : [])),
          );
          return hits.length === 0 ? 'no matches' : hits.join('\n');
        },
      }),
      tool({
        name: 'edit_file',
        description: 'Replaces the single exact occurrence of old with new in a file.',
        inputSchema: z.strictObject({ path: z.string(), old: z.string(), new: z.string() }),
        execute: (input) => {
          applyEdit(files(), input.path, input.old, input.new);
          this.current().editsMade++;
          return `edited ${input.path}`;
        },
      }),
      tool({
        name: 'run_tests',
        description: "Runs the repository's tests in the sandbox.",
        inputSchema: z.strictObject({}),
        execute: async () => {
          this.current().testRuns++;
          return summarizeRun(await runRepoTests(files(), this.testRunOptions()));
        },
      }),
    ];
    this.tools = tools;
  }

  /** Kills the test runs in flight (an agent's run_tests, the scoring run); the env stays usable. */
  async close(): Promise<void> {
    this.runs.abortAll();
  }

  private testRunOptions(): TestRunOptions {
    return { timeoutMs: this.options.testTimeoutMs, isolation: this.options.isolation, signal: this.runs.signal };
  }

  protected async start(seed: number, task: SweInstance | undefined): Promise<{ episode: SweEpisode; text: string }> {
    const instance = task ?? at(sweInstances, (seed % SPLIT_SIZE) % sweInstances.length, 'swe instances');
    const episode: SweEpisode = {
      instance,
      files: { ...instance.files },
      editsMade: 0,
      testRuns: 0,
      turnsUsed: 0,
      ended: false,
    };
    return { episode, text: `Issue: ${instance.issue}\nFiles: ${Object.keys(instance.files).sort().join(', ')}` };
  }

  protected async finish(episode: SweEpisode): Promise<Verdict> {
    const { instance } = episode;
    let evaluation: Awaited<ReturnType<typeof evaluateSubmission>>;
    try {
      evaluation = await evaluateSubmission(instance, episode.files, this.testRunOptions());
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return {
        success: false,
        text: `not resolved: the tests could not run (${reason})`.slice(0, 400),
        info: { failToPass: 0, passToPass: 0, testFailure: reason },
      };
    }
    const { run, resolved, failToPass, passToPass } = evaluation;
    const counts = `fail-to-pass ${failToPass}/${instance.failToPass.length}, pass-to-pass ${passToPass}/${instance.passToPass.length}`;
    const text =
      `${resolved ? 'resolved' : 'not resolved'}: ${counts}${run.failure === null ? '' : ` (tests did not run: ${run.failure})`}`.slice(
        0,
        400,
      );
    return {
      success: resolved,
      text,
      info: { failToPass, passToPass, ...(run.failure === null ? {} : { testFailure: run.failure }) },
    };
  }

  protected data(episode: SweEpisode): SweData {
    const { id, issue, files } = episode.instance;
    return { instance: { id, issue, files }, editsMade: episode.editsMade, testRuns: episode.testRuns };
  }

  protected override privileged(episode: SweEpisode): SwePrivileged {
    const { goldPatch, hiddenTests, failToPass } = episode.instance;
    return { goldPatch, hiddenTests, failToPass };
  }
}

export function makeSwe(options: SweOptions = {}): SweEnv {
  return new SweEnv(options);
}
