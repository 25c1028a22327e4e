/**
 * The chat protocol a policy speaks, for everything outside the rollout that prompts it (the agent
 * scaffolds, self-play): the model's own when the policy carries one (`policy.chatFormat`: its
 * Jinja template, stop tokens and tool-call format), else agentrl's byte template over the
 * policy's tokenizer — the same choice the rollout makes.
 *
 *   const format = chatFormatOf(policy);
 *   const prompt = userPrompt(format, 'What is 17 * 23?');
 *   const generation = await policy.generate({ prompt, maxNewTokens: 64, stopTokens: stopTokensOf(format) });
 *   format.parseAssistant(generation.text).toolCalls;
 *
 * Growing a conversation by one message is the rendering of the longer conversation past the
 * rendering of the shorter one (`appendedTokens`), which needs a prefix-stable template (ChatML,
 * Llama-3, Qwen2.5 and agentrl's are).
 */
import { ChatTemplateError } from '../core/errors.ts';
import type { Message } from '../core/types.ts';
import type { Tokenizer } from './tokenizer.ts';
import { agentrlChatFormat, type ChatFormat, type ChatRenderOptions } from './chat-format.ts';

/** What of a policy (src/policy `Policy`) picks its chat format. */
export interface ChatFormatSource {
  readonly tokenizer: Tokenizer;
  readonly chatFormat?: ChatFormat;
}

/** The policy's own chat format, or agentrl's byte template over its tokenizer. */
export function chatFormatOf(policy: ChatFormatSource): ChatFormat {
  return policy.chatFormat ?? agentrlChatFormat(policy.tokenizer);
}

/** Whether `format` is agentrl's byte template (`agentrlChatFormat`), whose scaffolds write the tool list into the system message themselves. */
export function isAgentrlFormat(format: ChatFormat): boolean {
  return format.name === 'agentrl';
}

/**
 * The ids generation stops at: the id that opens the template's turn end first (what a reply
 * closes with, and what a scripted policy appends), then the format's other stop ids.
 */
export function stopTokensOf(format: ChatFormat): number[] {
  const closing = format.turnEnd[0];
  if (closing === undefined) return [...format.stopTokens];
  return [closing, ...format.stopTokens.filter((id) => id !== closing)];
}

/** One user message and the opening of the assistant's reply: the prompt of a single-turn request. */
export function userPrompt(format: ChatFormat, content: string): number[] {
  return format.render([{ role: 'user', content }], { addGenerationPrompt: true }).tokens;
}

/**
 * The ids `messages` adds after `before` in the format: the rendering of before + messages past
 * the rendering of before (`addGenerationPrompt` on the longer one only, for the opening of a
 * reply). Throws a ChatTemplateError when the template rewrites what it rendered before.
 */
export function appendedTokens(
  format: ChatFormat,
  before: readonly Message[],
  messages: readonly Message[],
  options: ChatRenderOptions = {},
): number[] {
  const { tools = [], addGenerationPrompt = false } = options;
  const shorter = format.render(before, { tools }).tokens;
  const longer = format.render([...before, ...messages], { tools, addGenerationPrompt }).tokens;
  if (!startsWith(longer, shorter)) {
    const roles = messages.map((message) => message.role).join(', ') || 'the generation prompt';
    throw new ChatTemplateError(
      `${format.name}: adding ${roles} after message ${before.length - 1} changes the ids before it (the template is not prefix-stable), so the conversation cannot grow in token space; use a prefix-stable chat template`,
      {
        name: format.name,
        message: before.length,
      },
    );
  }
  return longer.slice(shorter.length);
}

/**
 * The text of a tool call written the way the format's parser reads it, for instructions and
 * format-error messages: `<tool_call>{"name": "<tool name>", "arguments": {...}}</tool_call>` for
 * agentrl's template (its long-standing wording), the family's own format otherwise.
 */
export function toolCallExample(format: ChatFormat, name = '<tool name>'): string {
  if (isAgentrlFormat(format)) return `<tool_call>{"name": "${name}", "arguments": {...}}</tool_call>`;
  return format.assistantText({ content: '', toolCalls: [{ id: 'call_0', name, arguments: { '...': '...' } }] });
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}
