/**
 * Shared by the streaming tests of serve-policy and the gateway: a tiny built-in model whose
 * generations run to their max_tokens, a reader that times each SSE content event as the
 * client receives it (a burst at the end shows as events that all arrive at once), and a reader
 * that adds up a streamed chat completion's content and tool-call deltas.
 */
import type OpenAI from 'openai';
import { at } from '../../core/indexing.ts';
import { TransformerModel } from '../../engine/transformer-model.ts';
import { byteTokenizer } from '../../chat/tokenizer.ts';

/**
 * A tiny random model that (all but) never samples the stop token: every lm-head column gets norm 4
 * (logits of std ≈ 4), the stop token's is zeroed.
 */
export async function talkativeModel(maxSeqLen: number): Promise<TransformerModel> {
  const tiny = {
    vocabSize: 272,
    hiddenSize: 64,
    numLayers: 2,
    numHeads: 2,
    numKvHeads: 2,
    intermediateSize: 128,
    maxSeqLen,
    tieWordEmbeddings: false,
  };
  const created = await TransformerModel.create(tiny, { seed: 7 });
  const params = await created.hostParams();
  const head = params.get('lmHead')!;
  const [D, V] = head.shape as [number, number];
  const end = byteTokenizer.specialTokens.end;
  for (let v = 0; v < V; v++) {
    let norm = 0;
    for (let d = 0; d < D; d++) norm += at(head.data, d * V + v, 'lm head') ** 2;
    const scale = v === end ? 0 : 4 / Math.sqrt(norm);
    for (let d = 0; d < D; d++) head.data[d * V + v] = at(head.data, d * V + v, 'lm head') * scale;
  }
  return TransformerModel.fromParams(created.config, params);
}

export interface StreamTiming {
  /** ms since `started` for each SSE `data:` event with content, and for the `[DONE]` event. */
  contentAt: number[];
  doneAt: number;
  text: string;
}

/** Reads a streamed chat completion to its end, timing each content event against `started`. */
export async function readStreamTiming(
  response: Response,
  started: number,
  onFirstContent?: () => void,
): Promise<StreamTiming> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const timing: StreamTiming = { contentAt: [], doneAt: Number.NaN, text: '' };
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const elapsedMs = performance.now() - started;
    buffered += decoder.decode(value, { stream: true });
    const events = buffered.split('\n\n');
    buffered = events.pop()!;
    for (const event of events) {
      const data = event.replace(/^data: /, '');
      if (data === '[DONE]') {
        timing.doneAt = elapsedMs;
        continue;
      }
      const content = (JSON.parse(data) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content;
      if (content) {
        if (timing.contentAt.length === 0) onFirstContent?.();
        timing.contentAt.push(elapsedMs);
        timing.text += content;
      }
    }
  }
  return timing;
}

/** The content, tool calls (name, parsed arguments) and finish reason a streamed chat completion adds up to. */
export async function readToolCallStream(
  stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>,
): Promise<{ content: string; calls: [string | undefined, unknown][]; finish: string | null }> {
  const calls: { name?: string; arguments: string }[] = [];
  let content = '';
  let finish: string | null = null;
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    content += delta?.content ?? '';
    for (const part of delta?.tool_calls ?? []) {
      const call = calls[part.index] ?? { arguments: '' };
      calls[part.index] = call;
      call.name ??= part.function?.name;
      call.arguments += part.function?.arguments ?? '';
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { content, calls: calls.map((call) => [call.name, JSON.parse(call.arguments)]), finish };
}
