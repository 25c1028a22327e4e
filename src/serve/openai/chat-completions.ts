/**
 * POST /v1/chat/completions: the messages rendered in the served model's chat format (tools
 * included), `n` choices batched, the output split into content and `tool_calls` in the model's
 * tool-call format; a JSON answer, or SSE chunks as the tokens are sampled (`stream: true`).
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { at } from '../../core/indexing.ts';
import type { ToolCall } from '../../core/types.ts';
import { jsonResponse } from '../hono-server.ts';
import type { BatchRow } from './batcher.ts';
import { Choice, collectEvents, openAiToolCall } from './choice.ts';
import { clientGoneSignal } from './client-gone.ts';
import type { PolicyContext } from './policy-context.ts';
import { stopList, toMessages, type ChatRequest } from './protocol.ts';
import { checkChatRequest } from './request-limits.ts';
import { eventStream } from './sse.ts';
import type { SplitEvent } from './tool-format.ts';

/** A chat completion whose whole response reached the client (the training gateway records these). */
export interface FinishedChat {
  /** The prompt ids the model continued (the chat template, tools prompt included). */
  prompt: number[];
  choices: Array<{
    tokens: number[];
    logprobs: number[];
    finishReason: FinishReason;
    content: string | null;
    toolCalls: ToolCall[];
  }>;
}

type FinishReason = 'stop' | 'length' | 'tool_calls';

/** The answer, and when its generation is over (a stream's ends after the Response is handed back). */
export interface ChatAnswer {
  response: Response;
  done: Promise<void>;
}

/** What one chat request needs once its prompt is rendered. */
interface ChatCall {
  context: PolicyContext;
  request: ChatRequest;
  prompt: number[];
  maxNewTokens: number;
  id: string;
  choices: Choice[];
  completed: (call: FinishedChat) => void;
  /** Aborted once the client has left (client-gone.ts): its rows stop being generated. */
  signal: AbortSignal | undefined;
}

/**
 * Answers a parsed chat request. `onFinished` is called once the whole response has been handed
 * to the client's socket (`outgoing`'s 'finish') — never for a client that left before the end.
 */
export async function chatCompletion(
  context: PolicyContext,
  request: ChatRequest,
  outgoing: ServerResponse,
  onFinished?: (call: FinishedChat) => void,
): Promise<ChatAnswer> {
  checkChatRequest(request, context.bounds); // before any rendering: a bounded request, or a 400 naming the limit
  const tools = request.tool_choice === 'none' ? [] : (request.tools ?? []);
  const useTools = tools.length > 0;
  const prompt = context.chatFormat.promptTokens(toMessages(request.messages), { tools, addGenerationPrompt: true });
  const maxNewTokens = context.budget(prompt, request.max_completion_tokens ?? request.max_tokens);
  const stopStrings = stopList(request.stop); // the client's; the turn ends are the context's
  const choices = Array.from(
    { length: request.n ?? 1 },
    (_, index) =>
      new Choice(context, index, {
        parseTools: useTools,
        stopStrings,
        idPrefix: `call_${randomBytes(6).toString('hex')}_`,
      }),
  );
  const call: ChatCall = {
    context,
    request,
    prompt,
    maxNewTokens,
    id: `chatcmpl-${randomBytes(12).toString('hex')}`,
    choices,
    completed: whenFinished(outgoing, onFinished),
    signal: clientGoneSignal(outgoing),
  };
  if (request.stream === true) return streamChat(call);
  return { response: await answerChat(call), done: Promise.resolve() };
}

async function answerChat({
  context,
  request,
  prompt,
  maxNewTokens,
  id,
  choices,
  completed,
  signal,
}: ChatCall): Promise<Response> {
  const sampling = context.sampling(request);
  const rows = await Promise.all(
    choices.map((choice) =>
      context.batcher.submit({
        prompt,
        maxNewTokens,
        sampling,
        onToken: (token, logprob) => choice.push(token, logprob),
        signal,
      }),
    ),
  );
  const finished: FinishedChat['choices'] = [];
  const body = rows.map((row, i) => {
    const choice = at(choices, i, 'choices');
    const { content, toolCalls } = collectEvents(choice.finish());
    const message = messageContent(content, toolCalls);
    finished.push(finishedChoice(choice, finishReason(row, toolCalls.length), message, toolCalls));
    return {
      index: i,
      message: {
        role: 'assistant',
        content: message,
        refusal: null,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls.map(openAiToolCall) } : {}),
      },
      logprobs:
        request.logprobs === true ? { content: choice.chatLogprobs(0, choice.ids.length), refusal: null } : null,
      finish_reason: finishReason(row, toolCalls.length),
    };
  });
  completed({ prompt, choices: finished });
  return jsonResponse(200, {
    id,
    object: 'chat.completion',
    created: now(),
    model: context.modelName,
    system_fingerprint: null,
    choices: body,
    usage: usage(prompt, rows),
  });
}

function streamChat({ context, request, prompt, maxNewTokens, id, choices, completed, signal }: ChatCall): ChatAnswer {
  const sampling = context.sampling(request);
  const sse = eventStream();
  const header = () => ({
    id,
    object: 'chat.completion.chunk',
    created: now(),
    model: context.modelName,
    system_fingerprint: null,
  });
  const chunk = (delta: Record<string, unknown>, choice: Choice, finish: string | null): void => {
    const { from, to } = choice.takePending();
    const logprobs = request.logprobs === true ? { content: choice.chatLogprobs(from, to), refusal: null } : null;
    sse.send({ ...header(), choices: [{ index: choice.index, delta, logprobs, finish_reason: finish }] });
  };
  const streamed = choices.map(() => ({ content: '', toolCalls: [] as ToolCall[] }));
  const emit = (choice: Choice, events: SplitEvent[]): void => {
    for (const event of events) {
      if (event.kind === 'content') {
        at(streamed, choice.index, 'streamed choices').content += event.text;
        chunk({ content: event.text }, choice, null);
      } else {
        at(streamed, choice.index, 'streamed choices').toolCalls.push(event.call);
        chunk({ tool_calls: [{ index: choice.streamedToolCalls++, ...openAiToolCall(event.call) }] }, choice, null);
      }
    }
  };
  for (const choice of choices) chunk({ role: 'assistant', content: '' }, choice, null);
  const run = async (): Promise<void> => {
    const rows = await Promise.all(
      choices.map(async (choice) => {
        const row = await context.batcher.submit({
          prompt,
          maxNewTokens,
          sampling,
          onToken: (token, logprob) => emit(choice, choice.pushAndSplit(token, logprob)),
          signal,
        });
        emit(choice, choice.finish());
        chunk({}, choice, finishReason(row, choice.splitter.toolCallCount));
        return row;
      }),
    );
    completed({
      prompt,
      choices: choices.map((choice, i) => {
        const { content, toolCalls } = at(streamed, i, 'streamed choices');
        return finishedChoice(
          choice,
          finishReason(at(rows, i, 'rows'), toolCalls.length),
          messageContent(content, toolCalls),
          toolCalls,
        );
      }),
    });
    if (request.stream_options?.include_usage === true)
      sse.send({ ...header(), choices: [], usage: usage(prompt, rows) });
    sse.end();
  };
  return { response: sse.response, done: run().catch(() => sse.abort()) };
}

/** Calls `onFinished` with the call once the response has fully left (its 'finish' event), if it ever does. */
function whenFinished(
  outgoing: ServerResponse,
  onFinished: ((call: FinishedChat) => void) | undefined,
): (call: FinishedChat) => void {
  if (onFinished === undefined) return () => {};
  let finished: FinishedChat | undefined;
  outgoing.once('finish', () => {
    if (finished !== undefined) onFinished(finished);
  });
  return (call) => {
    if (!outgoing.destroyed) finished = call;
  };
}

/** A reply that is only tool calls has content null (OpenAI's shape). */
function messageContent(content: string, toolCalls: readonly ToolCall[]): string | null {
  return toolCalls.length > 0 && content.trim() === '' ? null : content;
}

function finishReason(row: BatchRow, toolCalls: number): FinishReason {
  return toolCalls > 0 ? 'tool_calls' : row.finishReason;
}

function finishedChoice(
  choice: Choice,
  reason: FinishReason,
  content: string | null,
  toolCalls: ToolCall[],
): FinishedChat['choices'][number] {
  return { tokens: [...choice.ids], logprobs: [...choice.logprobs], finishReason: reason, content, toolCalls };
}

function usage(
  prompt: readonly number[],
  rows: readonly BatchRow[],
): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  const completionTokens = rows.reduce((sum, row) => sum + row.tokens.length, 0);
  return {
    prompt_tokens: prompt.length,
    completion_tokens: completionTokens,
    total_tokens: prompt.length + completionTokens,
  };
}

const now = (): number => Math.floor(Date.now() / 1000);
