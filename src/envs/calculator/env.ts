/**
 * Calculator: compute an integer arithmetic expression, optionally with the `calculator` tool.
 * Turn by turn the agent either calls the tool (`<tool_call>{"name": "calculator", "arguments":
 * {"expression": "..."}}</tool_call>` or a structured `action.toolCall`, result back as
 * `<tool_response>…</tool_response>`) or answers (`<answer>42</answer>`), which ends the episode:
 * reward 1 on an exact match of the integer, else 0. An invalid turn scores −formatPenalty; a tool
 * error (bad expression) is shown to the agent, not counted invalid. Truncated after `maxTurns`
 * turns without an answer.
 *
 * A pretrained chat model is scored in its own conventions with `answerFormat: 'last-integer'`
 * (a reply without a tool call is final and its last integer is the answer; one with no integer
 * is an invalid turn), `toolResultTag: false` (the bare result, which the rollout shows as a tool
 * message) and `requireToolCall` (success also needs an earlier calculator call whose expression
 * evaluated to the answer). `instructions` and `question` replace the prompt texts.
 */
import { z } from 'zod';
import { EpisodeEndedError, EpisodeNotStartedError, Rng, type Action, type Env, type Observation, type StepResult, type Tool } from '../../core/index.ts';
import { actionCharLimits, actionTooLong, parseAction, type ParsedAction, type ParsedToolCall } from '../action-format.ts';
import { parseOptions } from '../options.ts';
import { lastInteger } from './answer.ts';
import { evaluateExpression } from './evaluate.ts';
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
  operators: z.array(z.enum(calculatorOperators)).min(1).default([...calculatorOperators]),
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

interface Episode {
  expression: string;
  answer: number;
  lastToolResult: string | null;
  /** A calculator call evaluated to the answer. */
  calledToAnswer: boolean;
  turnsUsed: number;
  ended: boolean;
}

const tagInstructions =
  'Compute the integer value of the expression. You may call the calculator tool: ' +
  '<tool_call>{"name": "calculator", "arguments": {"expression": "2 + 3"}}</tool_call> ' +
  'Then reply <think>...</think><answer>5</answer>.';

export class CalculatorEnv implements Env<CalculatorTask> {
  readonly name = 'calculator';
  readonly tools: Tool[] = [calculatorTool];
  readonly instructions: string;
  private readonly options: z.output<typeof calculatorOptionsSchema>;
  private episode: Episode | null = null;

  constructor(options: CalculatorOptions = {}) {
    this.options = parseOptions(calculatorOptionsSchema, options, 'calculator');
    this.instructions = this.options.instructions ?? tagInstructions;
  }

  async reset({ seed, task }: { seed: number; task?: CalculatorTask }): Promise<Observation> {
    const { expression, answer } = task
      ? { expression: task.expression, answer: evaluateExpression(task.expression) }
      : generateExpression(new Rng(seed), this.options);
    this.episode = { expression, answer, lastToolResult: null, calledToAnswer: false, turnsUsed: 0, ended: false };
    return this.observe(this.episode, this.options.question.replaceAll('{expression}', expression));
  }

  async step(action: Action): Promise<StepResult> {
    const episode = this.episode;
    if (episode === null) throw new EpisodeNotStartedError(this.name);
    if (episode.ended) throw new EpisodeEndedError(this.name);
    episode.turnsUsed++;
    const parsed = actionTooLong(action, actionCharLimits.text) ?? (action.toolCall ? { kind: 'tool_call' as const, call: action.toolCall } : this.parseTurn(action.text));

    if (parsed.kind === 'answer') {
      const right = parsed.answer === String(episode.answer);
      const success = right && (episode.calledToAnswer || !this.options.requireToolCall);
      episode.ended = true;
      const observation = this.observe(episode, success ? 'correct' : right ? 'wrong: no calculator call gave the answer' : 'wrong');
      return { observation, reward: success ? 1 : 0, done: true, truncated: false, info: { invalidAction: false, success } };
    }
    const calledBefore = episode.calledToAnswer;
    const reason = parsed.kind === 'invalid' ? parsed.reason : this.callTool(episode, parsed.call);
    const truncated = episode.turnsUsed >= this.options.maxTurns;
    episode.ended = truncated;
    const ending = truncated ? { success: false } : {};
    if (reason !== null) {
      const observation = this.observe(episode, `invalid: ${reason}`);
      return { observation, reward: -this.options.formatPenalty, done: false, truncated, info: { invalidAction: true, reason, ...ending } };
    }
    const result = episode.lastToolResult ?? '';
    const observation = this.observe(episode, this.options.toolResultTag ? `<tool_response>${result}</tool_response>` : result);
    const reward = episode.calledToAnswer && !calledBefore ? this.options.toolCallReward : 0;
    return { observation, reward, done: false, truncated, info: { invalidAction: false, ...ending } };
  }

  /** A text turn: agentrl's tags, or (last-integer) a tag tool call or else a final answer, its last integer. */
  private parseTurn(text: string): ParsedAction {
    const parsed = parseAction(text);
    if (this.options.answerFormat === 'tag' || parsed.kind === 'tool_call') return parsed;
    const answer = lastInteger(text);
    return answer === null ? { kind: 'invalid', reason: 'no integer in the reply; end it with the integer answer' } : { kind: 'answer', thinking: null, answer: String(answer) };
  }

  /** Runs a tool call; returns why it is invalid, or null (its result is then in `lastToolResult`). */
  private callTool(episode: Episode, call: ParsedToolCall): string | null {
    if (call.name !== calculatorTool.name) return `unknown tool "${call.name.slice(0, 20)}"; allowed: ${calculatorTool.name}`;
    const input = calculatorTool.inputSchema.safeParse(call.arguments);
    if (!input.success) return 'calculator arguments must be {"expression": string}';
    try {
      const value = calculatorTool.execute(input.data);
      episode.lastToolResult = String(value);
      if (value === episode.answer) episode.calledToAnswer = true;
    } catch (error) {
      episode.lastToolResult = `error: ${error instanceof Error ? error.message : String(error)}`;
    }
    return null;
  }

  private observe(episode: Episode, text: string): Observation {
    const data: CalculatorData = {
      expression: episode.expression,
      lastToolResult: episode.lastToolResult,
      turnsLeft: this.options.maxTurns - episode.turnsUsed,
    };
    return { text, data };
  }
}

export function makeCalculator(options: CalculatorOptions = {}): CalculatorEnv {
  return new CalculatorEnv(options);
}
