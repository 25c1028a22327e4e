/**
 * Absolute Zero-style self-play (Zhao et al. 2025, "deduction" tasks): the same policy proposes a
 * task and then solves it, in one two-turn episode.
 *
 *   turn 1, propose: <answer>{"program": "function f(x) { return x * 3 + 1; }", "input": 4}</answer>
 *           the executor runs f(input) twice in each of two separate sandbox processes (so
 *           randomness drawn once per process is caught too), with `Math.random` seeded and the
 *           clock set differently in each; a program that reads `Math.random` or the clock at
 *           all (runFunction reports it), an error, a timeout, a non-JSON, an over-long
 *           (`maxOutputChars`) or a differing result rejects the task (the episode ends, reward 0). A program over `maxProgramChars` or an input over
 *           `maxInputChars` (as JSON) is an invalid turn, before anything runs.
 *   turn 2, solve:   <answer>13</answer>   (the output as JSON) → reward 1 when it equals f(input).
 *
 * The proposer is rewarded for learnable tasks: with a `solver` (n samples of the current policy
 * on the solve prompt, e.g. `policySolver` in train/self-play.ts), the solve rate r̄ gives
 * r_propose = 1 − r̄ when 0 < r̄ < 1, else 0 (too easy or impossible teaches nothing). Without a
 * solver r_propose is 0. Both turns are the policy's, so GRPO trains both roles from the same
 * trajectories. Success = the task was valid and solved. An unparsable turn is invalid
 * (−formatPenalty, same role again); truncated after `maxTurns` turns. The named reward
 * components (solved, learnability, invalid_action) are in rewards.ts.
 */
import { randomInt } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import {
  InvalidArgumentError,
  Rng,
  type Action,
  type Env,
  type Observation,
  type StepResult,
} from '../../core/index.ts';
import { parseAction } from '../action-format.ts';
import { closeTurn, openTurn } from '../episode-turns.ts';
import { parseOptions } from '../options.ts';
import { runFunction, type CallResult } from '../sandbox/function-runner.ts';
import { SandboxRuns } from '../sandbox/sandbox-runs.ts';
import { randomInput, referencePrograms, type ReferenceProgram } from './programs.ts';
import type { Rubric } from '../../rewards/rubric.ts';
import { scoreStep, type UnscoredStep } from '../step-reward.ts';
import { absoluteZeroRubric, type AbsoluteZeroStep } from './rewards.ts';

export { learnabilityReward } from './rewards.ts';

export const absoluteZeroOptionsSchema = z.strictObject({
  /** Longest program accepted (characters). */
  maxProgramChars: z.number().int().min(20).max(2000).default(300),
  /** Longest input accepted, as JSON text (characters). */
  maxInputChars: z.number().int().min(1).max(100_000).default(1000),
  /** Longest output accepted, as JSON text (characters); a longer one rejects the task. */
  maxOutputChars: z.number().int().min(1).max(100_000).default(1000),
  /** Solver samples per proposal for the learnability reward. */
  solverSamples: z.number().int().min(1).max(64).default(4),
  /** Turns per episode. */
  maxTurns: z.number().int().min(2).default(4),
  /** Subtracted from the reward of an invalid turn. */
  formatPenalty: z.number().min(0).default(0),
  /** Sandbox isolation: 'namespaces' (own network + PID namespaces; refused where Linux cannot make them) or 'process-only' (weaker, opt-in; docs/sandboxing.md). */
  isolation: z.enum(['namespaces', 'process-only']).default('namespaces'),
});
export type AbsoluteZeroOptions = z.input<typeof absoluteZeroOptionsSchema>;

/** n solution texts for a solve prompt (the policy's own attempts). */
export type Solver = (prompt: string, count: number) => Promise<string[]>;

export interface Proposal {
  program: string;
  input: unknown;
  output: unknown;
}

/** `observation.data`: what the agent may see — the role, the reference program, and the accepted proposal's program and input. */
export interface AbsoluteZeroData {
  role: 'propose' | 'solve' | 'done';
  reference: ReferenceProgram;
  proposal: Omit<Proposal, 'output'> | null;
}

/** `observation.privileged`, once a proposal is accepted: the executor's output (the solve answer, for scripted experts). */
export interface AbsoluteZeroPrivileged {
  output: unknown;
}

interface Episode {
  reference: ReferenceProgram & { example: unknown };
  proposal: Proposal | null;
  turnsUsed: number;
  ended: boolean;
}

/** The solve prompt of a task. */
export function solvePrompt(program: string, input: unknown): string {
  return `Solve: what does f return?\n${program}\nInput: ${JSON.stringify(input)}\nReply the output as JSON: <answer>13</answer>`;
}

/** Whether a solve reply states the output (JSON, or the plain string for string outputs). */
export function solves(reply: string, output: unknown): boolean {
  const parsed = parseAction(reply);
  if (parsed.kind !== 'answer') return false;
  try {
    return isDeepStrictEqual(JSON.parse(parsed.answer), output);
  } catch {
    return typeof output === 'string' && parsed.answer === output;
  }
}

export class AbsoluteZeroEnv implements Env<ReferenceProgram> {
  readonly name = 'absolute-zero';
  readonly instructions =
    'Self-play. When asked to propose, reply <answer>{"program": "function f(x) { ... }", "input": ...}</answer> (a deterministic JavaScript function f ' +
    'and one JSON input). When asked to solve, reply the output of f(input) as JSON: <answer>13</answer>.';
  private readonly options: z.output<typeof absoluteZeroOptionsSchema>;
  private readonly solver: Solver | undefined;
  private episode: Episode | null = null;
  /** The executor's runs in flight: `close()` kills them. */
  private readonly runs = new SandboxRuns();
  /** The reference tasks `reset` accepts (the env server checks a client's task against it). */
  readonly taskSchema: z.ZodType<ReferenceProgram>;
  readonly rewardComponents: Rubric<AbsoluteZeroStep>;

  constructor(options: AbsoluteZeroOptions = {}, resources: { solver?: Solver } = {}) {
    this.options = parseOptions(absoluteZeroOptionsSchema, options, 'absolute-zero');
    this.rewardComponents = absoluteZeroRubric(this.options);
    this.solver = resources.solver;
    this.taskSchema = z.strictObject({
      program: z.string().min(1).max(this.options.maxProgramChars),
      input: z.enum(['int', 'word', 'ints', 'sentence']),
    });
  }

  /** A task given to `reset`, checked against `taskSchema`. */
  private readTask(task: unknown): ReferenceProgram {
    const parsed = this.taskSchema.safeParse(task);
    if (!parsed.success)
      throw new InvalidArgumentError(`absolute-zero task: ${z.prettifyError(parsed.error)}`, {
        issues: parsed.error.issues,
      });
    return parsed.data;
  }

  /** Kills the executor's sandbox runs in flight (the proposal is then rejected, 'aborted'); the env stays usable. */
  async close(): Promise<void> {
    this.runs.abortAll();
  }

  async reset({ seed, task }: { seed: number; task?: ReferenceProgram }): Promise<Observation> {
    const rng = new Rng(seed);
    const reference = task === undefined ? rng.pick(referencePrograms) : this.readTask(task);
    this.episode = {
      reference: { ...reference, example: randomInput(reference.input, rng) },
      proposal: null,
      turnsUsed: 0,
      ended: false,
    };
    return this.observe(this.episode);
  }

  async step(action: Action): Promise<StepResult> {
    const episode = openTurn(this.name, this.episode);
    const scored = (turn: Partial<AbsoluteZeroStep>, step: UnscoredStep) =>
      scoreStep(this.name, this.rewardComponents, { invalid: false, solved: false, solveRate: null, ...turn }, step);
    const invalid = (reason: string): Promise<StepResult> => {
      const close = closeTurn(episode, this.options.maxTurns, { invalidAction: true, reason });
      return scored({ invalid: true }, { observation: this.observe(episode, `invalid: ${reason}`), ...close });
    };
    const parsed = action.toolCall ? null : parseAction(action.text);
    if (parsed === null || parsed.kind === 'tool_call') return invalid('no tools here; reply <answer>...</answer>');
    if (parsed.kind === 'invalid') return invalid(parsed.reason);

    if (episode.proposal !== null) {
      const success = solves(action.text, episode.proposal.output);
      episode.ended = true;
      return scored(
        { solved: success },
        {
          observation: this.observe(episode, success ? 'correct' : 'wrong'),
          done: true,
          truncated: false,
          info: { invalidAction: false, success, role: 'solve' },
        },
      );
    }
    const read = readProposal(parsed.answer, this.options);
    if (typeof read === 'string') return invalid(read);
    const { rejection, first } = await execute(read, { ...this.options, signal: this.runs.signal });
    if (rejection !== null || first === undefined || !('value' in first)) {
      episode.ended = true;
      const text = `task rejected: ${rejection}`.slice(0, 200);
      return scored(
        {},
        {
          observation: this.observe(episode, text),
          done: true,
          truncated: false,
          info: { invalidAction: false, success: false, role: 'propose', rejected: true },
        },
      );
    }
    episode.proposal = { program: read.program, input: read.input, output: first.value };
    let solveRate: number | undefined;
    if (this.solver !== undefined) {
      const replies = await this.solver(solvePrompt(read.program, read.input), this.options.solverSamples);
      solveRate = replies.filter((reply) => solves(reply, first.value)).length / Math.max(1, replies.length);
    }
    const close = closeTurn(episode, this.options.maxTurns, {
      invalidAction: false,
      role: 'propose',
      ...(solveRate === undefined ? {} : { solveRate }),
    });
    return scored({ solveRate: solveRate ?? null }, { observation: this.observe(episode), ...close });
  }

  private observe(episode: Episode, note?: string): Observation {
    const { reference, proposal } = episode;
    let text: string;
    if (proposal === null) {
      text = `Propose a task: a function f and an input. Example: ${JSON.stringify({ program: reference.program, input: reference.example })}`;
    } else {
      text = solvePrompt(proposal.program, proposal.input);
    }
    if (note !== undefined) text = episode.ended ? note : `${text}\n${note}`;
    const data: AbsoluteZeroData = {
      role: episode.ended ? 'done' : proposal === null ? 'propose' : 'solve',
      reference,
      proposal: proposal === null ? null : { program: proposal.program, input: proposal.input },
    };
    if (proposal === null) return { text, data };
    const privileged: AbsoluteZeroPrivileged = { output: proposal.output };
    return { text, data, privileged };
  }
}

/**
 * Runs f(input) twice in each of two separate sandbox processes: the first result, or why the
 * task is rejected (a failure, no value, an over-long output, results that differ).
 */
async function execute(
  proposal: { program: string; input: unknown },
  {
    maxOutputChars,
    isolation,
    signal,
  }: { maxOutputChars: number; isolation: 'namespaces' | 'process-only'; signal: AbortSignal },
): Promise<{ rejection: string | null; first: CallResult | undefined }> {
  const run = (entropy: { seed: number; clockMs: number }) =>
    runFunction({
      code: proposal.program,
      entry: 'f',
      calls: [[proposal.input], [proposal.input]],
      callTimeoutMs: 300,
      isolation,
      entropy,
      signal,
    });
  const runs = await Promise.all(distinctEntropies().map(run));
  const failed = runs.find((executed) => executed.failure !== null);
  const first = runs[0]?.results[0];
  if (failed !== undefined) return { rejection: failed.failure, first };
  const entropyRead = [...new Set(runs.flatMap((executed) => executed.entropyRead))];
  if (entropyRead.length > 0)
    return { rejection: `f reads ${entropyRead.join(' and ')}; a task must be deterministic`, first };
  if (first === undefined || !('value' in first))
    return { rejection: `f failed: ${first && 'error' in first ? first.error : 'no result'}`, first };
  const results = runs.flatMap((executed) => executed.results);
  if (!results.every((result) => isDeepStrictEqual(result, first)))
    return { rejection: 'f is not deterministic (within or across processes)', first };
  if ((JSON.stringify(first.value) ?? '').length > maxOutputChars)
    return { rejection: `output longer than ${maxOutputChars} characters as JSON`, first };
  return { rejection: null, first };
}

/**
 * Two different seeds of `Math.random` and two different clocks (one before 2050, one after), one
 * per process: a program whose output depends on them differs across the runs even where its read
 * went unreported (defence in depth; runFunction reports every read, and any read rejects).
 */
function distinctEntropies(): [{ seed: number; clockMs: number }, { seed: number; clockMs: number }] {
  const [y2000, y2050, y2100] = [Date.UTC(2000, 0, 1), Date.UTC(2050, 0, 1), Date.UTC(2100, 0, 1)];
  const seed = randomInt(2 ** 30);
  return [
    { seed, clockMs: randomInt(y2000, y2050) },
    { seed: seed + 1 + randomInt(2 ** 30), clockMs: randomInt(y2050, y2100) },
  ];
}

/** Reads `{"program": string, "input": JSON}`; a reason when it is not one. */
function readProposal(
  answer: string,
  { maxProgramChars, maxInputChars }: { maxProgramChars: number; maxInputChars: number },
): { program: string; input: unknown } | string {
  let value: unknown;
  try {
    value = JSON.parse(answer);
  } catch {
    return 'proposal must be JSON {"program": "...", "input": ...}';
  }
  const { program, input } = (value ?? {}) as { program?: unknown; input?: unknown };
  if (typeof program !== 'string' || input === undefined)
    return 'proposal must be JSON {"program": "...", "input": ...}';
  if (program.length > maxProgramChars) return `program longer than ${maxProgramChars} characters`;
  if (JSON.stringify(input).length > maxInputChars) return `input longer than ${maxInputChars} characters as JSON`;
  if (!/function\s+f\s*\(|\bf\s*=/.test(program)) return 'program must define a function f';
  return { program, input };
}

export function makeAbsoluteZero(
  options: AbsoluteZeroOptions = {},
  resources: { solver?: Solver } = {},
): AbsoluteZeroEnv {
  return new AbsoluteZeroEnv(options, resources);
}
