/**
 * Calculator: compute an integer arithmetic expression, optionally with the `calculator` tool.
 * Turn by turn the agent either calls the tool (`<tool_call>{"name": "calculator", "arguments":
 * {"expression": "..."}}</tool_call>` or a structured `action.toolCall`, result back as
 * `<tool_response>…</tool_response>`) or answers (`<answer>42</answer>`), which ends the episode:
 * reward 1 on an exact match of the integer, else 0. An invalid turn scores −formatPenalty; a tool
 * error (bad expression) is shown to the agent, not counted invalid. Truncated after `maxTurns`
 * turns without an answer. The turn bookkeeping and the tool run are `ToolTaskEnv`'s (tool-task.ts).
 *
 * A pretrained chat model is scored in its own conventions with `answerFormat: 'last-integer'`
 * (a reply without a tool call is final and its last integer is the answer; one with no integer
 * is an invalid turn), `toolResultTag: false` (the bare result, which the rollout shows as a tool
 * message) and `requireToolCall` (success also needs an earlier calculator call whose expression
 * evaluated to the answer). `instructions` and `question` replace the prompt texts.
 *
 * Shaping (rewards.ts; success unchanged): `callFormatReward` pays the first well-formed call,
 * `callOperandsReward` the first call with the question's operands and operators, `toolCallReward`
 * the first call that evaluated to the answer. `smallOperand` draws one operand from a smaller
 * range (the operand curriculum's easy stages: calculator-curriculum.ts).
 */
import { z } from 'zod';
import { Rng, type Tool } from '../../core/index.ts';
import type { ToolRun } from '../../core/tool.ts';
import { actionCharLimits, parseAction, type ParsedAction, type ParsedToolCall } from '../action-format.ts';
import { parseOptions } from '../options.ts';
import { ToolTaskEnv, type ToolTaskEpisode, type ToolTaskSettings, type Verdict } from '../tool-task.ts';
import { calculatorRubric } from './rewards.ts';
import { lastInteger } from './answer.ts';
import { evaluateExpression } from './evaluate.ts';
import { sameOperation } from './operation-match.ts';
import { calculatorOperators, generateExpression } from './generator.ts';

export const calculatorTool: Tool<{ expression: string }, number> = {
  name: 'calculator',
  description: 'Evaluates integer arithmetic: + - * and parentheses.',
  inputSchema: z.strictObject({ expression: z.string() }),
  execute: ({ expression }) => evaluateExpression(expression),
};

export const calculatorOptionsSchema = z.strictObject({
  /** Integers in each expression (difficulty). */
  numOperands: z.number().int().min(2).max(8).default(3),
  /** Smallest operand. */
  minOperand: z.number().int().min(0).max(1000).default(0),
  /** Largest operand. */
  maxOperand: z.number().int().min(1).max(1000).default(20),
  /** The operators drawn from. */
  operators: z
    .array(z.enum(calculatorOperators))
    .min(1)
    .default([...calculatorOperators]),
  /** Nest sub-expressions in parentheses (else a flat chain with usual precedence). */
  parentheses: z.boolean().default(true),
  /** Turns per episode (tool calls, answers and invalid turns). */
  maxTurns: z.number().int().positive().default(4),
  /** Subtracted from the reward of an invalid turn. */
  formatPenalty: z.number().min(0).default(0),
  /** How the final answer is read: `<answer>N</answer>`, or the last integer of a reply without a tool call. */
  answerFormat: z.enum(['tag', 'last-integer']).default('tag'),
  /** Success needs an earlier calculator call whose expression evaluated to the answer. */
  requireToolCall: z.boolean().default(false),
  /** Shaping: reward of the first calculator call whose expression evaluates to the answer (success is unchanged). */
  toolCallReward: z.number().min(0).default(0),
  /** Shaping (format): reward of the first well-formed calculator call, whatever its expression. */
  callFormatReward: z.number().min(0).default(0),
  /** Shaping: reward of the first calculator call whose expression has the question's operands and operators. */
  callOperandsReward: z.number().min(0).default(0),
  /** One operand, at a seeded position, drawn from [min, max] instead of [minOperand, maxOperand] (the curriculum's easy stages). */
  smallOperand: z
    .strictObject({ min: z.number().int().min(0).max(1000), max: z.number().int().min(0).max(1000) })
    .refine(({ min, max }) => min <= max, 'smallOperand: min must not exceed max')
    .optional(),
  /** Wrap a tool result as `<tool_response>…</tool_response>` (false: the bare result). */
  toolResultTag: z.boolean().default(true),
  /** The system instructions (default: agentrl's tag format, above). */
  instructions: z.string().min(1).optional(),
  /** The first observation, with `{expression}` where the expression goes. */
  question: z
    .string()
    .refine((text) => text.includes('{expression}'), 'question must contain {expression}')
    .default('{expression}'),
});
export type CalculatorOptions = z.input<typeof calculatorOptionsSchema>;

export interface CalculatorTask {
  expression: string;
}

/** `observation.data`: the expression, the latest tool response text (or null), turns left. */
export interface CalculatorData {
  expression: string;
  lastToolResult: string | null;
  turnsLeft: number;
}

export interface CalculatorEpisode extends ToolTaskEpisode {
  expression: string;
  answer: number;
  lastToolResult: string | null;
  /** The turn of the first calculator call that evaluated to the answer (null: none yet). */
  answerCallTurn: number | null;
  /** The turn of the first well-formed calculator call (null: none yet). */
  firstCallTurn: number | null;
  /** The turn of the first call with the question's operands and operators (null: none yet). */
  operandsCallTurn: number | null;
  /** The expression of this turn's calculator call (set by the tool as it runs). */
  callExpression: string | null;
}
type Episode = CalculatorEpisode;

const tagInstructions =
  'Compute the integer value of the expression. You may call the calculator tool: ' +
  '<tool_call>{"name": "calculator", "arguments": {"expression": "2 + 3"}}</tool_call> ' +
  'Then reply <think>...</think><answer>5</answer>.';

type Settings = z.output<typeof calculatorOptionsSchema> & ToolTaskSettings;

export class CalculatorEnv extends ToolTaskEnv<CalculatorTask, Episode, Settings> {
  readonly name = 'calculator';
  readonly instructions: string;
  readonly rewardComponents = calculatorRubric(this.options);

  constructor(options: CalculatorOptions = {}) {
    // Text-sized actions, tool results shown whole (the calculator's are short).
    super({
      ...parseOptions(calculatorOptionsSchema, options, 'calculator'),
      maxActionChars: actionCharLimits.text,
      maxToolResultChars: Number.POSITIVE_INFINITY,
    });
    // The env's own calculator records each call's expression (afterToolCall reads it).
    this.tools = [
      {
        ...calculatorTool,
        execute: (input: { expression: string }) => {
          this.current().callExpression = input.expression;
          return calculatorTool.execute(input);
        },
      },
    ];
    this.instructions = this.options.instructions ?? tagInstructions;
  }

  protected async start(seed: number, task: CalculatorTask | undefined): Promise<{ episode: Episode; text: string }> {
    const { expression, answer } = task
      ? { expression: task.expression, answer: evaluateExpression(task.expression) }
      : generateExpression(new Rng(seed), this.options);
    const episode: Episode = {
      expression,
      answer,
      lastToolResult: null,
      answerCallTurn: null,
      firstCallTurn: null,
      operandsCallTurn: null,
      callExpression: null,
      turnsUsed: 0,
      ended: false,
    };
    return { episode, text: this.options.question.replaceAll('{expression}', expression) };
  }

  protected async finish(episode: Episode, answer: string): Promise<Verdict> {
    const right = answer === String(episode.answer);
    const success = right && (episode.answerCallTurn !== null || !this.options.requireToolCall);
    return {
      success,
      text: success ? 'correct' : right ? 'wrong: no calculator call gave the answer' : 'wrong',
    };
  }

  /** A text turn: agentrl's tags, or (last-integer) a tag tool call or else a final answer, its last integer. */
  protected override parseTurn(text: string): ParsedAction {
    const parsed = parseAction(text);
    if (this.options.answerFormat === 'tag' || parsed.kind === 'tool_call') return parsed;
    const answer = lastInteger(text);
    return answer === null
      ? { kind: 'invalid', reason: 'no integer in the reply; end it with the integer answer' }
      : { kind: 'answer', thinking: null, answer: String(answer) };
  }

  /** Keeps the result and the turns of the first well-formed call, of the first with the question's operation and of the first that evaluates to the answer (the shaping terms: rewards.ts). */
  protected override afterToolCall(episode: Episode, run: ToolRun): void {
    const turn = episode.turnsUsed;
    episode.lastToolResult = run.ok ? run.text : run.error;
    episode.firstCallTurn ??= turn;
    if (episode.callExpression !== null && sameOperation(episode.callExpression, episode.expression))
      episode.operandsCallTurn ??= turn;
    if (run.ok && run.output === episode.answer) episode.answerCallTurn ??= turn;
    episode.callExpression = null;
  }

  protected override renderToolResult(_call: ParsedToolCall, result: string): string {
    return this.options.toolResultTag ? `<tool_response>${result}</tool_response>` : result;
  }

  protected data(episode: Episode): CalculatorData {
    return {
      expression: episode.expression,
      lastToolResult: episode.lastToolResult,
      turnsLeft: this.options.maxTurns - episode.turnsUsed,
    };
  }
}

export function makeCalculator(options: CalculatorOptions = {}): CalculatorEnv {
  return new CalculatorEnv(options);
}
