/**
 * The tool-calling loop: the policy replies, each tool call in its reply runs (tools declared
 * with zod), the results come back as tool messages, until a stop condition holds. Calls are read
 * and results rendered in the policy's chat format (`chatFormatOf`): agentrl's byte template's
 * `<tool_call>{…}</tool_call>` with the tools listed in the system message (`describeTools`), or
 * a model's own (SmolLM2's `<tool_call>[…]</tool_call>`, Qwen's …) with the tools rendered by
 * its template.
 *
 *   const result = await runToolLoop({ policy, tools: [calculator], prompt: 'What is 17 * 23?',
 *     stopWhen: [hasFinalAnswer(), stepCountIs(6)] });
 *   result.finalAnswer; result.trajectory; // token-level, trainable with the RL trainer
 *
 * - Unknown tools, invalid arguments and throwing tools come back to the model as the tool
 *   message (tools.ts); a malformed or unclosed `<tool_call>` block gets a user message saying
 *   so, in the format's own tool-call syntax.
 * - A reply with no tool call is a final answer; when no stop condition takes it, the loop asks
 *   the model to go on (`continuePrompt`).
 * - The loop also ends at `maxSteps` and when the context window has no room for another reply.
 */
import type { Message, Tool, Trajectory } from '../core/types.ts';
import { chatFormatOf, isAgentrlFormat, toolCallExample } from '../chat/policy-chat-format.ts';
import { replaceToolCallBlocks, toolCallOpen } from '../chat/tool-call-payload.ts';
import { toolSchema } from '../policy/openai-wire.ts';
import type { Policy } from '../policy/types.ts';
import { hasFinalAnswer, stepCountIs, type StopCondition, type ToolStep } from './stop-conditions.ts';
import { callTool, describeTools } from './tools.ts';
import { Transcript, type AgentSampling, clip } from './transcript.ts';

export interface ToolLoopOptions {
  policy: Policy;
  tools: readonly Tool[];
  /** The task: a user message, or a whole conversation to continue. */
  prompt: string | readonly Message[];
  /** Put first in the system message (the tool list follows it). */
  system?: string;
  /** Default [hasFinalAnswer(), stepCountIs(10)]. */
  stopWhen?: StopCondition | readonly StopCondition[];
  /** Hard ceiling on steps whatever `stopWhen` says. Default 50. */
  maxSteps?: number;
  /** Sampling of every reply. Default { maxNewTokens: 256 }; the seed advances by one per step. */
  sampling?: AgentSampling;
  /** Said to the model after a final answer no stop condition took. */
  continuePrompt?: string;
}

export interface ToolLoopResult {
  steps: ToolStep[];
  /** The last step's final answer, if it gave one. */
  finalAnswer?: string;
  stopReason: 'stop-condition' | 'max-steps' | 'context-window';
  messages: Message[];
  trajectory: Trajectory;
}

export async function runToolLoop(options: ToolLoopOptions): Promise<ToolLoopResult> {
  const {
    policy,
    tools,
    prompt,
    maxSteps = 50,
    continuePrompt = 'Go on: call a tool or give your final answer.',
  } = options;
  const stopWhen = options.stopWhen === undefined ? [hasFinalAnswer(), stepCountIs(10)] : [options.stopWhen].flat();
  const sampling = options.sampling ?? { maxNewTokens: 256 };
  const format = chatFormatOf(policy);
  // agentrl's byte model reads the tool list from the system message; a model's own template renders `tools` itself.
  const toolsInSystem = tools.length > 0 && isAgentrlFormat(format);
  const system = [options.system, toolsInSystem ? describeTools(tools) : undefined]
    .filter((part) => part !== undefined)
    .join('\n\n');
  const conversation: Message[] = typeof prompt === 'string' ? [{ role: 'user', content: prompt }] : [...prompt];
  const messages =
    system === ''
      ? conversation
      : [{ role: 'system' as const, content: system }, ...conversation.filter((message) => message.role !== 'system')];
  const transcript = new Transcript(policy, messages, {
    tools: toolsInSystem ? [] : tools.map((tool) => toolSchema(tool)),
  });
  const steps: ToolStep[] = [];
  let stopReason: ToolLoopResult['stopReason'] = 'max-steps';

  while (steps.length < maxSteps) {
    const generation = await transcript.generate({ ...sampling, seed: (sampling.seed ?? 0) + steps.length });
    if (generation === undefined) {
      stopReason = 'context-window';
      break;
    }
    const parsed = format.parseAssistant(generation.text, { idPrefix: `call_${steps.length}_` });
    const unclosed = replaceToolCallBlocks(parsed.content, () => true).includes(toolCallOpen);
    const malformed = unclosed
      ? [...parsed.invalid, parsed.content.slice(parsed.content.lastIndexOf(toolCallOpen))]
      : parsed.invalid;
    const step: ToolStep = { text: generation.text, toolCalls: parsed.toolCalls, results: [], malformed };
    for (const call of parsed.toolCalls) {
      const outcome = await callTool(tools, call.name, call.arguments);
      step.results.push(
        outcome.ok ? { call, output: outcome.output } : { call, output: outcome.error, error: outcome.kind },
      );
    }
    if (step.results.length > 0) {
      const results = step.results.map(
        ({ call, output }): Message => ({ role: 'tool', content: output, name: call.name, toolCallId: call.id }),
      );
      transcript.observe(results, { invalidAction: step.results.some((result) => result.error !== undefined) });
    }
    const [firstMalformed] = malformed;
    if (firstMalformed !== undefined) {
      transcript.observe(
        {
          role: 'user',
          content: `Error: malformed tool call ${clip(firstMalformed, 120)}; write ${toolCallExample(format)} with valid JSON.`,
        },
        { invalidAction: true },
      );
    } else if (parsed.toolCalls.length === 0) step.finalAnswer = parsed.content.trim();
    steps.push(step);
    if (stopWhen.some((condition) => condition({ steps }))) {
      stopReason = 'stop-condition';
      break;
    }
    if (step.finalAnswer !== undefined) transcript.observe({ role: 'user', content: continuePrompt });
  }
  const finalAnswer = steps.at(-1)?.finalAnswer;
  return {
    steps,
    ...(finalAnswer === undefined ? {} : { finalAnswer }),
    stopReason,
    messages: transcript.messages,
    trajectory: transcript.toTrajectory({
      success: finalAnswer !== undefined,
      truncated: stopReason !== 'stop-condition',
    }),
  };
}
