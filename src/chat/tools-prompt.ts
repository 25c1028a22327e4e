/**
 * How tools reach the built-in model: a system message placed first (merged with the caller's
 * own system message when there is one). `serve-policy` renders an OpenAI request's `tools` this
 * way, and the exported Jinja template (chat-template-jinja.ts) renders `apply_chat_template`'s
 * `tools` the same way, to the same token ids:
 *
 *   You can call these tools:
 *   <tools>
 *   {"name":"get_weather","description":"…","parameters":{…}}
 *   </tools>
 *   To call a tool, reply with <tool_call>{"name": "<tool name>", "arguments": {...}}</tool_call>.
 */
import type { Message } from '../core/types.ts';

/** An OpenAI / Hugging Face function tool (only the fields the prompt shows). */
export interface PromptTool {
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export const toolsPromptHeader = 'You can call these tools:\n<tools>';
export const toolsPromptFooter =
  '</tools>\nTo call a tool, reply with <tool_call>{"name": "<tool name>", "arguments": {...}}</tool_call>.';
/** Between the caller's own system message and the tools prompt. */
export const toolsPromptSeparator = '\n\n';
/** The parameters shown for a tool that declares none. */
export const noParameters = { type: 'object', properties: {} };

export function toolsPrompt(tools: readonly PromptTool[]): string {
  const lines = tools.map((tool) =>
    JSON.stringify({
      name: tool.function.name,
      description: tool.function.description ?? '',
      parameters: tool.function.parameters ?? noParameters,
    }),
  );
  return [toolsPromptHeader, ...lines, toolsPromptFooter].join('\n');
}

/** The messages with the tools prompt as (or merged into) the first system message. */
export function withToolsPrompt(messages: readonly Message[], tools: readonly PromptTool[]): Message[] {
  if (tools.length === 0) return [...messages];
  const prompt = toolsPrompt(tools);
  const [first, ...rest] = messages;
  if (first?.role === 'system')
    return [{ role: 'system', content: `${first.content}${toolsPromptSeparator}${prompt}` }, ...rest];
  return [{ role: 'system', content: prompt }, ...messages];
}
