/**
 * Math (verifiable rewards): a generated problem — multi-step arithmetic, a linear equation or a
 * templated word problem — answered with `<answer>…</answer>`, optionally after calling the
 * exact `calculator` tool (+ - * / and parentheses, fractions kept exact: `7/2`). The answer
 * checker accepts any form of the right value (`0.5` = `1/2`, `1,250`, `12 km`, `x = 3`; see
 * answer-check.ts). Reward (rewards.ts): 1 when correct, else 0, plus `formatReward` when the answer
 * came with a `<think>` block (R1-style format reward; 0 = off); −formatPenalty per invalid turn.
 */
import { z } from 'zod';
import { Rng } from '../../core/index.ts';
import { tool, type ToolRun } from '../../core/tool.ts';
import { parseOptions } from '../options.ts';
import { actionCharLimits } from '../action-format.ts';
import { ToolTaskEnv, toolTaskOptionsShape, type ToolTaskEpisode, type Verdict } from '../tool-task.ts';
import { answerMatches } from './answer-check.ts';
import { mathRubric } from './rewards.ts';
import { generateMathProblem, mathKinds, type MathProblem } from './generator.ts';
import { evaluateRational, formatRational } from './rational.ts';

export const mathCalculatorTool = tool({
  name: 'calculator',
  description: 'Evaluates arithmetic exactly: + - * / and parentheses; fractions stay exact (7/2).',
  inputSchema: z.strictObject({ expression: z.string() }),
  execute: ({ expression }) => formatRational(evaluateRational(expression)),
});

export const mathOptionsSchema = z.strictObject({
  ...toolTaskOptionsShape,
  maxActionChars: z.number().int().positive().default(actionCharLimits.text),
  /** Problem kinds to draw from. */
  kinds: z
    .array(z.enum(mathKinds))
    .min(1)
    .default([...mathKinds]),
  /** Integers in an arithmetic problem. */
  numOperands: z.number().int().min(2).max(8).default(3),
  /** Largest operand (arithmetic) or constant (linear). */
  maxOperand: z.number().int().min(1).max(1000).default(20),
  /** Added to a correct-or-not answer's reward when it came with a <think> block (0 = off). */
  formatReward: z.number().min(0).default(0),
});
export type MathOptions = z.input<typeof mathOptionsSchema>;

/** A fixed problem: the question and an expression whose value is the answer. */
export interface MathTask {
  question: string;
  solution: string;
  unit?: string;
}

/** `observation.data`: what the agent may see — the problem's kind and question, the last tool result, turns left. */
export interface MathData {
  problem: Pick<MathProblem, 'kind' | 'question'>;
  lastToolResult: string | null;
  turnsLeft: number;
}

/** `observation.privileged`: the problem's solution expression, answer and unit (for the scripted expert). */
export type MathPrivileged = Pick<MathProblem, 'solution' | 'answer' | 'unit'>;

export interface MathEpisode extends ToolTaskEpisode {
  problem: MathProblem;
  lastToolResult: string | null;
}

export class MathEnv extends ToolTaskEnv<MathTask, MathEpisode, z.output<typeof mathOptionsSchema>> {
  readonly name = 'math';
  readonly instructions =
    'Solve the problem. You may call <tool_call>{"name": "calculator", "arguments": {"expression": "(20 - 5) / 3"}}</tool_call>. ' +
    'Then reply <think>...</think><answer>5</answer> (a number; fractions like 7/2 are fine).';
  readonly rewardComponents = mathRubric(this.options);

  constructor(options: MathOptions = {}) {
    super(parseOptions(mathOptionsSchema, options, 'math'));
    this.tools = [mathCalculatorTool];
  }

  /** Keeps the calculator's result (null when it threw) for the expert. */
  protected override afterToolCall(episode: MathEpisode, run: ToolRun): void {
    episode.lastToolResult = run.ok ? run.text : null;
  }

  protected async start(seed: number, task: MathTask | undefined): Promise<{ episode: MathEpisode; text: string }> {
    const problem: MathProblem = task
      ? {
          kind: 'word',
          question: task.question,
          solution: task.solution,
          unit: task.unit ?? '',
          answer: evaluateRational(task.solution),
        }
      : generateMathProblem(new Rng(seed), this.options);
    return { episode: { problem, lastToolResult: null, turnsUsed: 0, ended: false }, text: problem.question };
  }

  protected async finish(episode: MathEpisode, answer: string, thinking: string | null): Promise<Verdict> {
    const success = answerMatches(answer, episode.problem.answer);
    const format = thinking !== null && thinking !== '' ? this.options.formatReward : 0;
    return {
      success,
      text: success ? 'correct' : 'wrong',
      info: { formatReward: format },
    };
  }

  protected data(episode: MathEpisode): MathData {
    const { kind, question } = episode.problem;
    return {
      problem: { kind, question },
      lastToolResult: episode.lastToolResult,
      turnsLeft: this.options.maxTurns - episode.turnsUsed,
    };
  }

  protected override privileged(episode: MathEpisode): MathPrivileged {
    const { solution, answer, unit } = episode.problem;
    return { solution, answer, unit };
  }
}

export function makeMath(options: MathOptions = {}): MathEnv {
  return new MathEnv(options);
}
