/**
 * One generated choice as it is streamed or assembled: its sampled ids and log-probs, the text
 * decoded so far (special tokens, the stop ids among them, left out; an id past the tokenizer as
 * U+FFFD) and the splitter that turns
 * that text into content and tool calls.
 */
import { at } from '../../core/indexing.ts';
import type { ToolCall } from '../../core/types.ts';
import { StreamingDecoder } from '../../chat/tokenizer.ts';
import { decodeGenerated } from '../../policy/request.ts';
import type { PolicyContext } from './policy-context.ts';
import { OutputSplitter, type SplitEvent } from './tool-format.ts';

export class Choice {
  readonly ids: number[] = [];
  readonly logprobs: number[] = [];
  text = '';
  /** Log-prob entries not yet attached to a streamed chunk. */
  pendingLogprobs = 0;
  /** Tool calls streamed so far (the `index` of the next one). */
  streamedToolCalls = 0;
  readonly splitter: OutputSplitter;
  private readonly decoder: StreamingDecoder;

  constructor(
    private readonly context: PolicyContext,
    readonly index: number,
    { parseTools, stopStrings, idPrefix }: { parseTools: boolean; stopStrings: readonly string[]; idPrefix: string },
  ) {
    this.decoder = new StreamingDecoder(context.tokenizer, { skipSpecialTokens: true });
    this.splitter = new OutputSplitter({
      syntax: parseTools ? context.toolCallSyntax : null,
      stopStrings,
      turnEnds: context.turnEnds,
      idPrefix,
    });
  }

  /** Adds a sampled id (stop ids add no text). */
  push(token: number, logprob: number): void {
    this.ids.push(token);
    this.logprobs.push(logprob);
    this.pendingLogprobs++;
    if (this.context.stopTokens.includes(token)) return;
    // A spare id past the tokenizer (a remote sampler may return one) reads as U+FFFD; the id stays as sampled.
    this.text += token >= this.context.tokenizer.vocabSize ? `${this.decoder.flush()}\uFFFD` : this.decoder.push(token);
  }

  /** Streaming: adds a sampled id and returns the events it makes emittable. */
  pushAndSplit(token: number, logprob: number): SplitEvent[] {
    this.push(token, logprob);
    return this.splitter.update(this.text);
  }

  finish(): SplitEvent[] {
    this.text += this.decoder.flush();
    return this.splitter.finish(this.text);
  }

  /** The ids [from, to) but the stop ids, with their log-probs. */
  sampled(from: number, to: number): { id: number; token: string; logprob: number }[] {
    const entries = [];
    for (let i = from; i < to; i++) {
      const id = at(this.ids, i, 'choice ids');
      if (this.context.stopTokens.includes(id)) continue;
      entries.push({
        id,
        token: decodeGenerated(this.context.tokenizer, [id]),
        logprob: at(this.logprobs, i, 'choice logprobs'),
      });
    }
    return entries;
  }

  /** Chat log-prob entries of the ids [from, to), the stop ids left out. */
  chatLogprobs(from: number, to: number): { token: string; logprob: number; bytes: number[]; top_logprobs: [] }[] {
    return this.sampled(from, to).map(({ id, token, logprob }) => ({
      token,
      logprob,
      // A spare id past the tokenizer (a remote sampler's) has no bytes of its own: its U+FFFD's.
      bytes:
        id < this.context.tokenizer.vocabSize
          ? [...(this.context.tokenizer.tokenBytes(id) ?? [])]
          : [...new TextEncoder().encode(token)],
      top_logprobs: [] as [],
    }));
  }

  /** Completion log-probs of the ids [from, to): text offsets count from `offset`. */
  completionLogprobs(
    from: number,
    to: number,
    offset: number,
  ): { tokens: string[]; token_logprobs: number[]; top_logprobs: null; text_offset: number[] } {
    const entries = this.sampled(from, to);
    const textOffset: number[] = [];
    for (const entry of entries) {
      textOffset.push(offset);
      offset += entry.token.length;
    }
    return {
      tokens: entries.map((entry) => entry.token),
      token_logprobs: entries.map((entry) => entry.logprob),
      top_logprobs: null,
      text_offset: textOffset,
    };
  }

  /** The ids since the last streamed chunk; resets the count. */
  takePending(): { from: number; to: number } {
    const from = this.ids.length - this.pendingLogprobs;
    this.pendingLogprobs = 0;
    return { from, to: this.ids.length };
  }
}

/** Content and tool calls of split events. */
export function collectEvents(events: readonly SplitEvent[]): { content: string; toolCalls: ToolCall[] } {
  const content = events.flatMap((event) => (event.kind === 'content' ? [event.text] : [])).join('');
  const toolCalls = events.flatMap((event) => (event.kind === 'tool_call' ? [event.call] : []));
  return { content, toolCalls };
}

export function openAiToolCall(call: ToolCall): {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
} {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } };
}
