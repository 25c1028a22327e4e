/**
 * The OpenAI API request shapes `serve-policy` accepts (zod), and the conversion of chat messages
 * to agentrl's `Message[]`. Unknown fields are ignored (clients send many); fields whose
 * non-default value the built-in model cannot honour (penalties, top_logprobs > 0, JSON mode,
 * images) are a 400 naming the field, never silently dropped.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../core/errors.ts';
import type { Message, ToolCall } from '../../core/types.ts';
import { jsonObjectSchema } from '../../core/json-object.ts';

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const content = z.union([z.string(), z.array(textPart), z.null()]).optional();

const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function').default('function'),
  /** OpenAI sends a JSON string; a Hugging Face-style client may send the object itself. */
  function: z.object({ name: z.string(), arguments: z.union([z.string(), jsonObjectSchema]) }),
});

const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content }),
  z.object({ role: z.literal('user'), content }),
  z.object({ role: z.literal('assistant'), content, tool_calls: z.array(toolCallSchema).nullish() }),
  z.object({ role: z.literal('tool'), content, tool_call_id: z.string(), name: z.string().optional() }),
]);

export const functionToolSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: jsonObjectSchema.optional(),
    strict: z.boolean().nullish(),
  }),
});
export type FunctionTool = z.output<typeof functionToolSchema>;

const stop = z.union([z.string(), z.array(z.string()).max(4)]).nullish();
const zeroOnly = z
  .number()
  .nullish()
  .refine((value) => value === undefined || value === null || value === 0, {
    message: 'is not supported by the built-in model; leave it unset or 0',
  });

/** Sampling fields shared by both endpoints. */
const sampling = {
  model: z.string(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  n: z.number().int().min(1).max(16).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  stop,
  seed: z.number().int().nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  frequency_penalty: zeroOnly,
  presence_penalty: zeroOnly,
};

export const chatRequestSchema = z.looseObject({
  ...sampling,
  messages: z.array(messageSchema).min(1),
  max_completion_tokens: z.number().int().min(1).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: zeroOnly,
  tools: z.array(functionToolSchema).nullish(),
  tool_choice: z
    .union([
      z.enum(['none', 'auto', 'required']),
      z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
    ])
    .nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: z
    .object({ type: z.string() })
    .nullish()
    .refine((format) => format == null || format.type === 'text', {
      message: 'only {"type": "text"} is supported by the built-in model',
    }),
});
export type ChatRequest = z.output<typeof chatRequestSchema>;

export const completionRequestSchema = z.looseObject({
  ...sampling,
  prompt: z.union([
    z.string(),
    z.array(z.string()).min(1),
    z.array(z.number().int().min(0)).min(1),
    z.array(z.array(z.number().int().min(0)).min(1)).min(1),
  ]),
  logprobs: z
    .number()
    .int()
    .nullish()
    .refine((value) => value === undefined || value === null || value === 0, {
      message: 'only 0 is supported (the sampled tokens’ log-probs, no top alternatives)',
    }),
  echo: z.boolean().nullish(),
  suffix: z
    .string()
    .nullish()
    .refine((value) => !value, { message: 'is not supported by the built-in model' }),
  best_of: z
    .number()
    .int()
    .nullish()
    .refine((value) => value === undefined || value === null || value === 1, { message: 'only 1 is supported' }),
});
export type CompletionRequest = z.output<typeof completionRequestSchema>;

/** OpenAI chat messages → agentrl messages (`developer` is a system message; text parts are joined; tool-call arguments text kept verbatim). */
export function toMessages(messages: ChatRequest['messages']): Message[] {
  return messages.map((message, index) => toMessage(message, index));
}

/** One OpenAI chat message (the `index`-th, named in argument errors) → an agentrl message; the switch covers every role. */
function toMessage(message: ChatRequest['messages'][number], index: number): Message {
  const text =
    typeof message.content === 'string' ? message.content : (message.content ?? []).map((part) => part.text).join('');
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: text };
    case 'user':
      return { role: 'user', content: text };
    case 'tool':
      return {
        role: 'tool',
        content: text,
        toolCallId: message.tool_call_id,
        ...(message.name === undefined ? {} : { name: message.name }),
      };
    case 'assistant': {
      const toolCalls = (message.tool_calls ?? []).map((call): ToolCall => toolCall(call, index));
      return toolCalls.length === 0
        ? { role: 'assistant', content: text }
        : { role: 'assistant', content: text, toolCalls };
    }
  }
}

/** A string's text is kept verbatim (`argumentsJson`): the chat template renders it as written, like transformers does. */
function toolCall(call: z.output<typeof toolCallSchema>, index: number): ToolCall {
  const { name, arguments: args } = call.function;
  if (typeof args !== 'string') return { id: call.id, name, arguments: args };
  if (args === '') return { id: call.id, name, arguments: {} };
  return { id: call.id, name, arguments: parseArguments(args, index), argumentsJson: args };
}

function parseArguments(text: string, index: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError(`messages[${index}].tool_calls: arguments is not JSON: ${text.slice(0, 80)}`, {
      param: `messages[${index}]`,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`messages[${index}].tool_calls: arguments must be a JSON object`, {
      param: `messages[${index}]`,
    });
  }
  return value as Record<string, unknown>;
}

export function stopList(value: string | string[] | null | undefined): string[] {
  if (value === undefined || value === null) return [];
  return (typeof value === 'string' ? [value] : value).filter((text) => text !== '');
}
