/**
 * POST /v1/completions: prompts (a string, strings, ids or lists of ids) continued as they are,
 * `n` choices each, all batched; echo, logprobs: 0, stop strings; JSON or SSE (`stream: true`).
 * Text prompts for agentrl's byte model get `<|bos|>` in front (as every training sequence had);
 * for a model with its own chat format they are tokenized as written (no special token added:
 * put the model's BOS in the text if it wants one).
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { at } from '../../core/indexing.ts';
import { jsonResponse } from '../hono-server.ts';
import type { BatchRow } from './batcher.ts';
import { Choice, collectEvents } from './choice.ts';
import { clientGoneSignal } from './client-gone.ts';
import type { PolicyContext } from './policy-context.ts';
import { stopList, type CompletionRequest } from './protocol.ts';
import { checkCompletionRequest } from './request-limits.ts';
import { eventStream } from './sse.ts';
import type { SplitEvent } from './tool-format.ts';

interface Job {
  prompt: number[];
  maxNewTokens: number;
  choice: Choice;
  /** Aborted once the client has left (client-gone.ts). */
  signal: AbortSignal | undefined;
}

/** Answers a parsed completion request; `outgoing` tells when its client leaves (its rows then stop being generated). */
export async function completion(
  context: PolicyContext,
  request: CompletionRequest,
  outgoing?: ServerResponse,
): Promise<Response> {
  checkCompletionRequest(request, context.bounds); // before any prompt is encoded: prompts × n, max_tokens, lengths
  const prompts = completionPrompts(context, request.prompt);
  const n = request.n ?? 1;
  const stopStrings = stopList(request.stop); // the client's; the turn ends are the context's
  const signal = clientGoneSignal(outgoing);
  const jobs = prompts.flatMap((prompt, p) => {
    const maxNewTokens = context.budget(prompt, request.max_tokens ?? 16);
    return Array.from(
      { length: n },
      (_, j): Job => ({
        prompt,
        maxNewTokens,
        choice: new Choice(context, p * n + j, { parseTools: false, stopStrings, idPrefix: '' }),
        signal,
      }),
    );
  });
  const id = `cmpl-${randomBytes(12).toString('hex')}`;
  const usage = (rows: BatchRow[]) => {
    const promptTokens = prompts.reduce((sum, prompt) => sum + prompt.length * n, 0);
    const completionTokens = rows.reduce((sum, row) => sum + row.tokens.length, 0);
    return {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    };
  };
  if (request.stream === true) return streamCompletion(context, request, jobs, id, usage);
  const sampling = context.sampling(request);
  const rows = await Promise.all(
    jobs.map((job) =>
      context.batcher.submit({
        prompt: job.prompt,
        maxNewTokens: job.maxNewTokens,
        sampling,
        onToken: (token, logprob) => job.choice.push(token, logprob),
        signal: job.signal,
      }),
    ),
  );
  const choices = rows.map((row, i) => {
    const { choice, prompt } = at(jobs, i, 'jobs');
    const text = collectEvents(choice.finish()).content;
    const echo = echoText(context, request, prompt);
    return {
      index: choice.index,
      text: echo + text,
      logprobs: request.logprobs === 0 ? choice.completionLogprobs(0, choice.ids.length, echo.length) : null,
      finish_reason: row.finishReason,
    };
  });
  return jsonResponse(200, {
    id,
    object: 'text_completion',
    created: now(),
    model: context.modelName,
    system_fingerprint: null,
    choices,
    usage: usage(rows),
  });
}

function streamCompletion(
  context: PolicyContext,
  request: CompletionRequest,
  jobs: Job[],
  id: string,
  usage: (rows: BatchRow[]) => unknown,
): Response {
  const sampling = context.sampling(request);
  const sse = eventStream();
  const offsets = jobs.map((job) => echoText(context, request, job.prompt).length);
  const chunk = (i: number, text: string, finish: string | null): void => {
    const { choice } = at(jobs, i, 'jobs');
    const { from, to } = choice.takePending();
    const offset = at(offsets, i, 'echo offsets');
    const logprobs = request.logprobs === 0 ? choice.completionLogprobs(from, to, offset) : null;
    offsets[i] = offset + text.length;
    sse.send({
      id,
      object: 'text_completion',
      created: now(),
      model: context.modelName,
      choices: [{ index: choice.index, text, logprobs, finish_reason: finish }],
    });
  };
  const emit = (i: number, events: SplitEvent[]): void => {
    for (const event of events) if (event.kind === 'content') chunk(i, event.text, null);
  };
  jobs.forEach((job, i) => {
    const echo = echoText(context, request, job.prompt);
    if (echo !== '') {
      offsets[i] = 0;
      chunk(i, echo, null);
    }
  });
  const run = async (): Promise<void> => {
    const rows = await Promise.all(
      jobs.map(async (job, i) => {
        const row = await context.batcher.submit({
          prompt: job.prompt,
          maxNewTokens: job.maxNewTokens,
          sampling,
          onToken: (token, logprob) => emit(i, job.choice.pushAndSplit(token, logprob)),
          signal: job.signal,
        });
        emit(i, job.choice.finish());
        chunk(i, '', row.finishReason);
        return row;
      }),
    );
    if (request.stream_options?.include_usage === true)
      sse.send({
        id,
        object: 'text_completion',
        created: now(),
        model: context.modelName,
        choices: [],
        usage: usage(rows),
      });
    sse.end();
  };
  void run().catch(() => sse.abort());
  return sse.response;
}

function echoText(context: PolicyContext, request: CompletionRequest, prompt: readonly number[]): string {
  return request.echo === true ? context.tokenizer.decode(prompt, { skipSpecialTokens: true }) : '';
}

/** Completion prompts as ids: text is encoded (agentrl's byte model: `<|bos|>` in front); ids are taken as given. */
function completionPrompts(context: PolicyContext, prompt: CompletionRequest['prompt']): number[][] {
  const { tokenizer } = context;
  const prefix = context.chatFormat.name === 'agentrl' ? [tokenizer.specialTokens.bos] : [];
  if (typeof prompt === 'string') return [[...prefix, ...tokenizer.encode(prompt)]];
  if (prompt.every((item) => typeof item === 'string'))
    return (prompt as string[]).map((text) => [...prefix, ...tokenizer.encode(text)]);
  if (prompt.every((item) => typeof item === 'number')) return [prompt as number[]];
  return prompt as number[][];
}

const now = (): number => Math.floor(Date.now() / 1000);
