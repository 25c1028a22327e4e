/**
 * Reflexion (Shinn et al. 2023, arXiv 2303.11366): an actor tries the task; when the evaluator
 * says the trial failed, the policy writes a verbal self-reflection on what went wrong, kept in an
 * episodic memory (the last `memorySize` reflections, Ω = 3 in the paper) and given to the actor
 * in the next trial, for up to `trials` trials.
 *
 *   const result = await runReflexion({ policy, task: question, trials: 3,
 *     attempt: async ({ reflections }) => {
 *       const run = await runReAct({ policy, tools, question, instructions: reflectionsText(reflections) });
 *       return { success: run.answer === gold, transcript: describeReAct(run), result: run };
 *     } });
 *
 * The actor is any function (a ReAct or tool-calling run, one generation, …) so Reflexion wraps
 * every scaffold. A reflection that comes back empty is not stored (the next trial runs without it).
 * A transcript too long for the context window is cut from the front in the reflection request.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { chatFormatOf, stopTokensOf } from '../chat/policy-chat-format.ts';
import { fitUserPrompt } from './fit-prompt.ts';
import type { Policy } from '../policy/types.ts';
import type { ReActResult } from './react.ts';
import type { AgentSampling } from './transcript.ts';

export interface TrialOutcome<Result> {
  success: boolean;
  /** The attempt as text, for the reflection prompt. */
  transcript: string;
  /** What the evaluator said (e.g. "wrong answer", a failing test). */
  feedback?: string;
  result: Result;
}

export interface ReflexionOptions<Result> {
  policy: Policy;
  /** The task, as shown in the reflection prompt. */
  task: string;
  /** One trial of the actor given the reflections so far (oldest first). */
  attempt: (context: { trial: number; reflections: readonly string[] }) => Promise<TrialOutcome<Result>>;
  /** Default 3. */
  trials?: number;
  /** Reflections kept (sliding window). Default 3. */
  memorySize?: number;
  /** Sampling of the reflections. Default { maxNewTokens: 256 }. */
  sampling?: AgentSampling;
  /** The reflection request. Default `reflectionPrompt`. */
  prompt?: (input: { task: string; transcript: string; feedback?: string; reflections: readonly string[] }) => string;
}

export interface ReflexionTrial<Result> {
  trial: number;
  outcome: TrialOutcome<Result>;
  /** The reflections the actor was given. */
  given: string[];
  /** The reflection written after this trial failed (when not empty). */
  reflection?: string;
}

export interface ReflexionResult<Result> {
  success: boolean;
  trials: ReflexionTrial<Result>[];
  /** The episodic memory at the end. */
  memory: string[];
}

export function reflectionPrompt({
  task,
  transcript,
  feedback,
}: {
  task: string;
  transcript: string;
  feedback?: string;
}): string {
  return [
    'You tried the task below and failed. In a few sentences, diagnose the likely reason for the failure and write a concise, high-level plan that avoids the same mistake next time.',
    '',
    `Task: ${task}`,
    '',
    'Your attempt:',
    transcript,
    ...(feedback === undefined ? [] : ['', `Feedback: ${feedback}`]),
    '',
    'Reflection:',
  ].join('\n');
}

/** The reflections as instructions for the next trial ('' when there are none). */
export function reflectionsText(reflections: readonly string[]): string {
  if (reflections.length === 0) return '';
  return [
    'Reflections on your earlier attempts at this task (use them to do better):',
    ...reflections.map((reflection, i) => `${i + 1}. ${reflection}`),
  ].join('\n');
}

/** A ReAct run as text for the reflection prompt. */
export function describeReAct(run: ReActResult): string {
  return run.steps
    .map((step, i) =>
      [
        `Thought ${i + 1}: ${step.thought}`,
        `Action ${i + 1}: ${step.action}[${step.input}]`,
        ...(step.observation === '' ? [] : [`Observation ${i + 1}: ${step.observation}`]),
      ].join('\n'),
    )
    .join('\n');
}

export async function runReflexion<Result>(options: ReflexionOptions<Result>): Promise<ReflexionResult<Result>> {
  const { policy, task, attempt, trials = 3, memorySize = 3 } = options;
  if (!Number.isInteger(trials) || trials < 1)
    throw new InvalidArgumentError(`trials must be a positive integer, got ${trials}`, { trials });
  if (!Number.isInteger(memorySize) || memorySize < 1)
    throw new InvalidArgumentError(`memorySize must be a positive integer, got ${memorySize}`, { memorySize });
  const sampling = options.sampling ?? { maxNewTokens: 256 };
  const prompt = options.prompt ?? reflectionPrompt;
  const format = chatFormatOf(policy);
  const memory: string[] = [];
  const history: ReflexionTrial<Result>[] = [];
  for (let trial = 0; trial < trials; trial++) {
    const given = [...memory];
    const outcome = await attempt({ trial, reflections: given });
    const record: ReflexionTrial<Result> = { trial, outcome, given };
    history.push(record);
    if (outcome.success) return { success: true, trials: history, memory };
    if (trial === trials - 1) break;
    // The transcript is cut from the front (keeping how the attempt ended) when the request would not leave room for the reflection.
    const request = fitUserPrompt({
      text: outcome.transcript,
      build: (transcript) =>
        prompt({
          task,
          transcript,
          ...(outcome.feedback === undefined ? {} : { feedback: outcome.feedback }),
          reflections: given,
        }),
      format,
      budget: policy.contextWindow - sampling.maxNewTokens - format.turnEnd.length,
    });
    if (request === undefined) break; // not even the task fits beside a reflection
    const generation = await policy.generate({
      ...sampling,
      stopTokens: stopTokensOf(format),
      seed: (sampling.seed ?? 0) + trial,
      prompt: request,
    });
    const reflection = generation.text.trim();
    if (reflection === '') continue;
    record.reflection = reflection;
    memory.push(reflection);
    if (memory.length > memorySize) memory.shift();
  }
  return { success: false, trials: history, memory };
}
