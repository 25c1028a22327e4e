/**
 * A model's own Jinja chat template as a `ChatFormat`, rendered with `@huggingface/jinja` the way
 * transformers' `apply_chat_template(messages, tools=…, add_generation_prompt=…, tokenize=True)`
 * does: the template gets `messages`, `tools`, `add_generation_prompt`, the special-token strings
 * (`bos_token`, `eos_token`, …; @huggingface/jinja supplies `raise_exception` and `strftime_now`); the text is tokenized with
 * added tokens parsed and no BOS added. `npm run check:chat` checks the ids against transformers.
 *
 * Messages reach the template in Hugging Face's shape: `{role, content}`, assistant
 * `tool_calls: [{id, type: 'function', function: {name, arguments}}]` (arguments a dict), tool
 * results `{role: 'tool', content, tool_call_id, name}`. A template that never reads `tool_calls`
 * (SmolLM2's GGUF template) gets the calls written into the content in the family's format; one
 * that never reads `tools` gets them as a system message (merged into the first one), so a model
 * whose template predates tool use still sees them in the format its parser reads.
 *
 * Assistant mask: for assistant message i, the tokens between the rendering of messages[0..i)
 * with the generation prompt and the rendering of messages[0..i] without its trailing
 * `turnEnd` remainder (the `\n` after `<|im_end|>`) — the reply and its stop token. This needs a
 * prefix-stable template (each rendering a token prefix of the next, true of ChatML, Llama-3 and
 * Qwen2.5 templates); otherwise `render` throws a ChatTemplateError naming the message.
 */
import { Template } from '@huggingface/jinja';
import { ChatTemplateError } from '../core/errors.ts';
import type { Message, ToolCall } from '../core/types.ts';
import type { Tokenizer } from './tokenizer.ts';
import type { PromptTool } from './tools-prompt.ts';
import type { AnsweredCall, ChatFormat, ChatFormatFiles, ChatRenderOptions, RenderedChat } from './chat-format.ts';
import { formatToolCalls, parseToolCalls, pythonJson, type ToolCallFamily } from './tool-call-format.ts';

export interface JinjaChatFormatOptions {
  name?: string;
  tokenizer: Tokenizer;
  template: string;
  /** Strings the template may read: bos_token, eos_token, pad_token, unk_token … */
  specialTokenStrings?: Record<string, string>;
  /** Generation stops at any of these. */
  stopTokens: readonly number[];
  toolCallFamily: ToolCallFamily;
  /** The model files the format comes from, kept on it for checkpoints (`ChatFormat.files`). */
  files?: ChatFormatFiles;
}

/** A message in the shape transformers' chat templates read. */
export type TemplateMessage = Record<string, unknown>;

export function jinjaChatFormat(options: JinjaChatFormatOptions): ChatFormat {
  const {
    tokenizer,
    template: source,
    specialTokenStrings = {},
    stopTokens,
    toolCallFamily,
    name = 'jinja',
    files,
  } = options;
  const template = parseTemplate(source, name);
  const readsToolCalls = source.includes('tool_calls');
  const readsTools = /\btools\b/.test(source);

  const renderText = (
    messages: readonly Message[],
    tools: readonly PromptTool[],
    addGenerationPrompt: boolean,
  ): string => {
    const input = templateInput(messages, tools, { readsToolCalls, readsTools, family: toolCallFamily });
    try {
      return template.render({
        ...specialTokenStrings,
        messages: input.messages,
        ...(input.tools === undefined ? {} : { tools: input.tools }),
        add_generation_prompt: addGenerationPrompt,
      });
    } catch (error) {
      if (error instanceof ChatTemplateError) throw error;
      throw new ChatTemplateError(`${name}: the chat template failed: ${(error as Error).message}`, { name });
    }
  };
  const encode: Encode = (messages, tools, addGenerationPrompt) =>
    tokenizer.encode(renderText(messages, tools, addGenerationPrompt));
  const turnEnd = probeTurnEnd(encode, stopTokens, name);

  const format: ChatFormat = {
    name,
    tokenizer,
    stopTokens: [...stopTokens],
    turnEnd,
    render(
      messages: readonly Message[],
      { tools = [], addGenerationPrompt = false }: ChatRenderOptions = {},
    ): RenderedChat {
      const tokens = encode(messages, tools, addGenerationPrompt);
      return { tokens, assistantMask: assistantMaskOf(tokens, messages, tools, { encode, turnEnd, name }) };
    },
    promptTokens: (messages, { tools = [], addGenerationPrompt = false } = {}) =>
      encode(messages, tools, addGenerationPrompt),
    userTurn: (text: string): number[] =>
      turnAfter(
        encode,
        [...probeConversation, { role: 'assistant', content: 'y' }],
        { role: 'user', content: text },
        { name, turn: 'a user turn after an assistant turn' },
      ),
    toolTurn: (content: string, call: AnsweredCall): number[] =>
      turnAfter(
        encode,
        [
          ...probeConversation,
          { role: 'assistant', content: '', toolCalls: [{ id: call.id, name: call.name, arguments: {} }] },
        ],
        { role: 'tool', content, toolCallId: call.id, name: call.name },
        { name, turn: 'a tool message after an assistant tool call' },
      ),
    assistantText: (message) =>
      joinContent(message.content, formatToolCalls(toolCallFamily, message.toolCalls ?? []), toolCallFamily),
    parseAssistant: (text, parseOptions) => parseToolCalls(toolCallFamily, text, parseOptions),
    ...(files === undefined ? {} : { files }),
  };
  return format;
}

/** The token ids of a conversation rendered by the template (with the generation prompt or not). */
type Encode = (messages: readonly Message[], tools: readonly PromptTool[], addGenerationPrompt: boolean) => number[];

/** The conversation rendered to learn what closes a reply and what a new user or tool turn adds. */
const probeConversation: readonly Message[] = [{ role: 'user', content: 'x' }];

function parseTemplate(source: string, name: string): Template {
  try {
    return new Template(source);
  } catch (error) {
    throw new ChatTemplateError(`${name}: the chat template does not parse: ${(error as Error).message}`, { name });
  }
}

/** The ids that close an assistant reply, from its first stop token on (e.g. `<|im_end|>` and `\n`). */
function probeTurnEnd(encode: Encode, stopTokens: readonly number[], name: string): number[] {
  const stopSet = new Set(stopTokens);
  const probePrompt = encode(probeConversation, [], true);
  const probeReply = encode([...probeConversation, { role: 'assistant', content: 'y' }], [], false);
  const stopAt = probeReply.findIndex((id, i) => i >= probePrompt.length && stopSet.has(id));
  if (!startsWith(probeReply, probePrompt) || stopAt < 0) {
    throw new ChatTemplateError(
      `${name}: an assistant reply does not follow the generation prompt, or ends in none of the stop tokens [${stopTokens.join(', ')}]`,
      { name },
    );
  }
  return probeReply.slice(stopAt);
}

/** The ids `next` adds after the closed conversation `closed` (with the generation prompt after it). */
function turnAfter(
  encode: Encode,
  closed: readonly Message[],
  next: Message,
  { name, turn }: { name: string; turn: string },
): number[] {
  const before = encode(closed, [], false);
  const after = encode([...closed, next], [], true);
  if (!startsWith(after, before))
    throw new ChatTemplateError(`${name}: ${turn} changes the ids before it (template not prefix-stable)`, { name });
  return after.slice(before.length);
}

/** 1 on each assistant reply and its stop token in `tokens` (the rendering of `messages`), 0 elsewhere; see the header. */
function assistantMaskOf(
  tokens: readonly number[],
  messages: readonly Message[],
  tools: readonly PromptTool[],
  { encode, turnEnd, name }: { encode: Encode; turnEnd: readonly number[]; name: string },
): number[] {
  const assistantMask = tokens.map(() => 0);
  messages.forEach((message, i) => {
    if (message.role !== 'assistant') return;
    const before = encode(messages.slice(0, i), tools, true);
    const through = encode(messages.slice(0, i + 1), tools, false);
    if (!startsWith(through, before) || !startsWith(tokens, through)) {
      throw new ChatTemplateError(
        `${name}: the template is not prefix-stable at message ${i} (assistant): its rendering does not extend the rendering before it, so no assistant mask can be taken from it`,
        { name, message: i },
      );
    }
    const stop = through.length - (turnEnd.length - 1);
    for (let t = before.length; t < stop; t++) assistantMask[t] = 1;
  });
  return assistantMask;
}

/** The messages (and tools) as transformers' templates read them; see the header. */
export function templateInput(
  messages: readonly Message[],
  tools: readonly PromptTool[],
  { readsToolCalls, readsTools, family }: { readsToolCalls: boolean; readsTools: boolean; family: ToolCallFamily },
): { messages: TemplateMessage[]; tools?: Record<string, unknown>[] } {
  const out: TemplateMessage[] = messages.map((message) => {
    const calls = message.toolCalls ?? [];
    if (message.role === 'assistant' && calls.length > 0) {
      if (!readsToolCalls)
        return { role: 'assistant', content: joinContent(message.content, formatToolCalls(family, calls), family) };
      return { role: 'assistant', content: message.content, tool_calls: calls.map(templateToolCall) };
    }
    if (message.role === 'tool') {
      return {
        role: 'tool',
        content: message.content,
        ...(message.toolCallId === undefined ? {} : { tool_call_id: message.toolCallId }),
        ...(message.name === undefined ? {} : { name: message.name }),
      };
    }
    return { role: message.role, content: message.content };
  });
  if (tools.length === 0) return { messages: out };
  const toolDicts = tools.map((tool) => ({ type: 'function', function: { ...tool.function } }));
  if (readsTools) return { messages: out, tools: toolDicts };
  const prompt = familyToolsPrompt(family, tools);
  if (out[0]?.role === 'system') out[0] = { role: 'system', content: `${out[0].content as string}\n\n${prompt}` };
  else out.unshift({ role: 'system', content: prompt });
  return { messages: out };
}

/** The system text describing tools, for a template that does not render `tools` itself. */
export function familyToolsPrompt(family: ToolCallFamily, tools: readonly PromptTool[]): string {
  const lines = tools.map((tool) =>
    pythonJson({
      name: tool.function.name,
      description: tool.function.description ?? '',
      parameters: tool.function.parameters ?? { type: 'object', properties: {} },
    }),
  );
  const example = formatToolCalls(family, tools.slice(0, 1).map(exampleCall));
  return ['You can call these tools:', '<tools>', ...lines, '</tools>', `To call tools, reply with ${example}`].join(
    '\n',
  );
}

/**
 * The call shown in the tools prompt: the first tool's real name and parameter names (a small
 * model copies the example literally; `TOOL_NAME` / `ARGUMENT` placeholders were copied as written).
 */
function exampleCall(tool: PromptTool): { name: string; arguments: Record<string, unknown> } {
  const properties =
    (tool.function.parameters as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  return {
    name: tool.function.name,
    arguments: Object.fromEntries(Object.keys(properties).map((key) => [key, '...'])),
  };
}

function templateToolCall(call: ToolCall): Record<string, unknown> {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}

function joinContent(content: string, calls: string, family: ToolCallFamily): string {
  if (calls === '') return content;
  if (content === '') return calls;
  return family === 'qwen' ? `${content}\n${calls}` : `${content}${calls}`;
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}
