/**
 * The OpenAI chat-completions wire format as the OpenAI-compatible policy speaks it: agentrl
 * messages and zod tools → request JSON, and a response body → a checked `ChatCompletion`.
 *
 * - Tools go out as function schemas (`z.toJSONSchema` of the tool's input schema).
 * - An assistant message whose text holds `<tool_call>{…}</tool_call>` blocks (as the chat template
 *   renders them) goes out with `tool_calls` when tool messages answer it; the tool messages get
 *   the matching `tool_call_id`s in order. A tool message that answers no call goes out as a user
 *   message (the API rejects a lone tool message).
 * - Log-probs: `logprobs.content[i]` per generated token; with vLLM's
 *   `return_tokens_as_token_ids` its `token` reads `token_id:<id>`.
 */
import { z } from 'zod';
import { at } from '../core/indexing.ts';
import type { Message, Tool, ToolCall } from '../core/types.ts';
import { parseAssistantText } from '../chat/chat-template.ts';

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

export interface FunctionSchema {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export function toolSchema(tool: Tool): FunctionSchema {
  const { $schema: _schema, ...parameters } = z.toJSONSchema(tool.inputSchema, {
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters } };
}

export function toWireMessages(messages: readonly Message[]): WireMessage[] {
  const wire: WireMessage[] = [];
  const pendingIds: string[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      pendingIds.length = 0;
      const answered = messages[index + 1]?.role === 'tool';
      const parsed =
        message.toolCalls !== undefined
          ? { content: message.content, toolCalls: message.toolCalls }
          : parseAssistantText(message.content, { idPrefix: `call_${index}_` });
      if (!answered || parsed.toolCalls.length === 0) {
        wire.push({ role: 'assistant', content: message.content });
        return;
      }
      const calls = parsed.toolCalls.map(
        (call): WireToolCall => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        }),
      );
      for (const call of calls) pendingIds.push(call.id);
      wire.push({ role: 'assistant', content: parsed.content === '' ? null : parsed.content, tool_calls: calls });
      return;
    }
    if (message.role === 'tool') {
      const id = message.toolCallId ?? pendingIds.shift();
      wire.push(
        id === undefined
          ? { role: 'user', content: message.content }
          : { role: 'tool', content: message.content, tool_call_id: id },
      );
      return;
    }
    wire.push({ role: message.role, content: message.content });
  });
  return wire;
}

const logprobEntry = z.object({
  token: z.string(),
  logprob: z.number(),
  bytes: z.array(z.number().int()).nullish(),
});

const responseSchema = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().nullish(),
                function: z.object({ name: z.string(), arguments: z.string().nullish() }),
              }),
            )
            .nullish(),
        }),
        logprobs: z.object({ content: z.array(logprobEntry).nullish() }).nullish(),
        finish_reason: z.string().nullish(),
        /** vLLM: the stop string or token id that ended the generation. */
        stop_reason: z.union([z.string(), z.number()]).nullish(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }).nullish(),
});

/** A tool call whose `arguments` the server returned as text that is not a JSON object. */
export interface MalformedToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface TokenLogprob {
  /** The token's text, or `token_id:<id>` (vLLM `return_tokens_as_token_ids`). */
  token: string;
  /** The id, when the server returned ids. */
  id?: number;
  logprob: number;
  /** The token's UTF-8 bytes when the server sent them. */
  bytes?: number[];
}

export interface ChatCompletion {
  content: string;
  toolCalls: ToolCall[];
  malformedToolCalls: MalformedToolCall[];
  /** 'stop', 'length', 'tool_calls', … as the server said ('stop' when it said nothing). */
  finishReason: string;
  /** vLLM's `stop_reason`: the stop string (or token id) that ended the generation. */
  stopReason?: string | number;
  /** Per generated token, when the server sent log-probs. */
  tokens?: TokenLogprob[];
  usage?: { promptTokens: number; completionTokens: number };
  model?: string;
}

/** Checks a response body; returns the first choice, or a reason the body is not a chat completion. */
export function parseChatCompletion(body: unknown): ChatCompletion | string {
  const parsed = responseSchema.safeParse(body);
  if (!parsed.success) {
    const issue = at(parsed.error.issues, 0, 'validation issues');
    return `${issue.path.join('.') || '(body)'}: ${issue.message}`;
  }
  const { choices, usage, model } = parsed.data;
  const choice = at(choices, 0, 'choices');
  const toolCalls: ToolCall[] = [];
  const malformedToolCalls: MalformedToolCall[] = [];
  (choice.message.tool_calls ?? []).forEach((call, index) => {
    const id = call.id ?? `call_${index}`;
    const text = call.function.arguments ?? '';
    let value: unknown;
    try {
      value = JSON.parse(text === '' ? '{}' : text);
    } catch {
      value = undefined;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      toolCalls.push({ id, name: call.function.name, arguments: value as Record<string, unknown> });
    else malformedToolCalls.push({ id, name: call.function.name, arguments: text });
  });
  const entries = choice.logprobs?.content ?? undefined;
  return {
    content: choice.message.content ?? '',
    toolCalls,
    malformedToolCalls,
    finishReason: choice.finish_reason ?? 'stop',
    ...(choice.stop_reason == null ? {} : { stopReason: choice.stop_reason }),
    ...(entries == null
      ? {}
      : {
          tokens: entries.map((entry): TokenLogprob => {
            const id = /^token_id:(\d+)$/.exec(entry.token);
            return {
              token: entry.token,
              logprob: entry.logprob,
              ...(id === null ? {} : { id: Number(id[1]) }),
              ...(entry.bytes == null ? {} : { bytes: entry.bytes }),
            };
          }),
        }),
    ...(usage == null
      ? {}
      : { usage: { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens } }),
    ...(model === undefined ? {} : { model }),
  };
}
