/**
 * Composable stop conditions of the tool-calling loop (as the Vercel AI SDK's `stopWhen`):
 *
 *   stopWhen: [stepCountIs(8), hasToolCall('submit'), hasFinalAnswer()]
 *
 * The loop stops after a step when any of them holds.
 */
import type { ToolCall } from '../core/types.ts';

export interface ToolResult {
  call: ToolCall;
  /** The text the model sees. */
  output: string;
  /** Set when the call failed (unknown tool, invalid arguments, the tool threw). */
  error?: 'unknown-tool' | 'invalid-arguments' | 'tool-error';
}

export interface ToolStep {
  /** The reply as generated. */
  text: string;
  toolCalls: ToolCall[];
  results: ToolResult[];
  /** `<tool_call>` blocks that did not parse. */
  malformed: string[];
  /** The reply's text when it called no tool (and had no malformed call). */
  finalAnswer?: string;
}

export type StopCondition = (context: { steps: readonly ToolStep[] }) => boolean;

export function stepCountIs(count: number): StopCondition {
  return ({ steps }) => steps.length >= count;
}

export function hasToolCall(name: string): StopCondition {
  return ({ steps }) => steps.at(-1)?.toolCalls.some((call) => call.name === name) === true;
}

/** The latest reply called no tool: it is the final answer (optionally one that `accept` takes). */
export function hasFinalAnswer(accept: (answer: string) => boolean = () => true): StopCondition {
  return ({ steps }) => {
    const answer = steps.at(-1)?.finalAnswer;
    return answer !== undefined && accept(answer);
  };
}
