/**
 * What bench:real trains on, from its env variables (issue 34):
 *
 * - `BENCH_REAL_TASK`: `add` (default; task.ts: a + b, operands 2–19, the tool optional) or `mul`
 *   (two 2-digit operands with `*`, the tool required: success needs a calculator call whose
 *   expression gave the answer, then that number — SmolLM2-135M-Instruct's base success is 0%);
 * - `BENCH_REAL_REWARD`: `outcome` (default: the task's own weights) or `shaped` (the calculator's
 *   shaping terms paid on top of `solved`: `call_format` 0.1 for the first well-formed call in the
 *   model's format, `call_operands` 0.2 for the first with the question's operands and operator,
 *   `tool_call` 0.2 for the first that evaluated to the answer — src/envs/calculator/rewards.ts);
 * - `BENCH_REAL_CURRICULUM`: `none` (default), `operands` (src/envs/calculator/calculator-curriculum.ts:
 *   one operand 2–9, then 10–19, then 10–49, then the task) or, for `mul`, `prompt` (the few-shot
 *   scaffold fades: two earlier questions answered by calls, then one, then the zero-shot question
 *   "What is …?", which is then the held-out task — the base's 0%); each stage is left when the
 *   mean train success of two iterations reaches `BENCH_REAL_ADVANCE_AT` (default 0.5);
 * - `BENCH_REAL_STAR`: for `mul`, a STaR round before RL on that many train tasks (src/train/star.ts):
 *   the zero-shot question is the task, and the `callshot` scaffold is the hint the tasks the model
 *   fails are played again with; the successes are fine-tuned on under the zero-shot question.
 *   Default 0 (off).
 *
 * Training plays the curriculum's current stage; the held-out test and the validation play the
 * task itself.
 */
import { z } from 'zod';
import type { ChatFormat } from '../../src/chat/chat-format.ts';
import { InvalidArgumentError } from '../../src/core/index.ts';
import { type CalculatorEnv, type CalculatorOptions, makeCalculator } from '../../src/envs/calculator/env.ts';
import { CalculatorCurriculum } from '../../src/envs/calculator/calculator-curriculum.ts';
import { realTaskName, realTaskOptions } from './task.ts';
import { chatConventions, probeTasks, questionTexts, systemTexts } from './variants.ts';

export const trainingTaskSchema = z.strictObject({
  task: z.enum(['add', 'mul']).default('add'),
  reward: z.enum(['outcome', 'shaped']).default('outcome'),
  curriculum: z.enum(['none', 'operands', 'prompt']).default('none'),
  advanceAt: z.coerce.number().min(0).max(1).default(0.5),
  star: z.coerce.number().int().min(0).default(0),
});
export type TrainingTaskChoice = z.output<typeof trainingTaskSchema>;

/** The choice from `BENCH_REAL_TASK`, `BENCH_REAL_REWARD`, `BENCH_REAL_CURRICULUM`, `BENCH_REAL_ADVANCE_AT`, `BENCH_REAL_STAR`; a bad value names the allowed ones. */
export function readTrainingTask(variables: NodeJS.ProcessEnv = process.env): TrainingTaskChoice {
  const result = trainingTaskSchema.safeParse({
    task: variables.BENCH_REAL_TASK,
    reward: variables.BENCH_REAL_REWARD,
    curriculum: variables.BENCH_REAL_CURRICULUM,
    advanceAt: variables.BENCH_REAL_ADVANCE_AT,
    star: variables.BENCH_REAL_STAR,
  });
  if (!result.success) throw new InvalidArgumentError(`bench:real: ${z.prettifyError(result.error)}`);
  if (result.data.star > 0 && result.data.task !== 'mul')
    throw new InvalidArgumentError(
      'bench:real: BENCH_REAL_STAR needs BENCH_REAL_TASK=mul (its hint is the call examples)',
    );
  return result.data;
}

/** The shaping weights `BENCH_REAL_REWARD=shaped` adds (env options of the calculator). */
export const shapedRewardWeights = { callFormatReward: 0.1, callOperandsReward: 0.2, toolCallReward: 0.2 } as const;

/** The tool-required multiplication's prompt, chosen by the component probe (docs/bench-real.md); with the prompt curriculum the task's question is `zeroShotQuestion`. */
export const mulPrompt = { system: 'plain', question: 'callshot' } as const;
const zeroShotQuestion = 'what';
/** The prompt curriculum's scaffolds, easiest first, before the task's zero-shot question. */
const promptStages = ['callshot', 'callone'] as const;

export interface TrainingTask {
  /** A README-row description of the task, reward and curriculum. */
  name: string;
  /** The task itself (held-out test, validation, the monitor's components). */
  testEnv: () => CalculatorEnv;
  /** The env training plays: the curriculum's current stage of the task. */
  trainEnv: () => CalculatorEnv;
  curriculum?: CalculatorCurriculum;
  /** With `BENCH_REAL_STAR`: the task with the `callshot` scaffold before its question (the same operands per seed). */
  hintEnv?: () => CalculatorEnv;
}

/** The zero-shot question is the task when a scaffold is faded (prompt curriculum) or distilled (STaR). */
const zeroShot = (choice: TrainingTaskChoice): boolean => choice.curriculum === 'prompt' || choice.star > 0;

function taskOptions(format: ChatFormat, choice: TrainingTaskChoice): CalculatorOptions {
  if (choice.task === 'add') return realTaskOptions(format);
  return {
    ...probeTasks.mul2x2,
    ...chatConventions,
    instructions: systemTexts(format)[mulPrompt.system],
    question: questionTexts(format)[zeroShot(choice) ? zeroShotQuestion : mulPrompt.question],
  };
}

function makeCurriculum(format: ChatFormat, choice: TrainingTaskChoice): CalculatorCurriculum | undefined {
  if (choice.curriculum === 'none') return undefined;
  if (choice.curriculum === 'operands') return new CalculatorCurriculum({ advanceAt: choice.advanceAt });
  if (choice.task !== 'mul')
    throw new InvalidArgumentError('bench:real: BENCH_REAL_CURRICULUM=prompt needs BENCH_REAL_TASK=mul');
  const questions = questionTexts(format);
  return new CalculatorCurriculum({
    stages: [...promptStages.map((name) => ({ question: questions[name] })), {}],
    advanceAt: choice.advanceAt,
  });
}

export function makeTrainingTask(format: ChatFormat, choice: TrainingTaskChoice): TrainingTask {
  const options = {
    ...taskOptions(format, choice),
    ...(choice.reward === 'shaped' ? shapedRewardWeights : {}),
  };
  const curriculum = makeCurriculum(format, choice);
  const taskName =
    choice.task === 'add'
      ? realTaskName
      : `a * b, two 2-digit operands, tool required (mul2x2/${mulPrompt.system}/${zeroShot(choice) ? zeroShotQuestion : mulPrompt.question})`;
  const extras = [
    choice.reward === 'shaped' ? 'shaped reward (call_format 0.1, call_operands 0.2, tool_call 0.2)' : undefined,
    curriculum === undefined
      ? undefined
      : `${choice.curriculum} curriculum (${curriculum.stages} stages, advance at ${choice.advanceAt})`,
    choice.star > 0 ? `STaR round on ${choice.star} tasks (hint: ${mulPrompt.question})` : undefined,
  ].filter((part) => part !== undefined);
  return {
    name: [taskName, ...extras].join(', '),
    testEnv: () => makeCalculator(options),
    trainEnv: () => makeCalculator({ ...options, ...curriculum?.stageOptions() }),
    curriculum,
    ...(choice.star > 0
      ? { hintEnv: () => makeCalculator({ ...options, question: questionTexts(format)[mulPrompt.question] }) }
      : {}),
  };
}
