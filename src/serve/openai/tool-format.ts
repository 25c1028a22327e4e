/**
 * Tool calls in the served model's own text format, and the splitter that turns its (streamed)
 * output into OpenAI content and `tool_calls`.
 *
 * Tools reach the model through its chat format: agentrl's byte template gets them as a system
 * message (chat/tools-prompt.ts, re-exported here); a model's Jinja template renders them itself.
 * How a call is written depends on the format (`toolCallSyntax`):
 *
 *   agentrl   <tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>
 *   smollm2   <tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}, …]</tool_call>
 *   qwen      <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>
 *   llama3    {"name": "get_weather", "parameters": {"city": "Paris"}}   (the whole reply)
 *
 * The block formats are read block by block: each well-formed block becomes its calls (`arguments`
 * re-serialised as a JSON string); a malformed block stays in the content. When streaming, text
 * that might be the start of a block or of a stop string is held back until it is decided. A
 * whole-reply format holds a reply that starts like a call to its end, then parses it whole.
 */
import type { ToolCall } from '../../core/types.ts';
import type { ChatFormat } from '../../chat/chat-format.ts';
import {
  readToolCallPayload,
  toolCallClose,
  toolCallOpen,
  type ToolCallPayload,
  type ToolCallText,
} from '../../chat/tool-call-payload.ts';

export { toolsPrompt, withToolsPrompt } from '../../chat/tools-prompt.ts';

export type SplitEvent = { kind: 'content'; text: string } | { kind: 'tool_call'; call: ToolCall };

const callsOf = (read: ToolCallPayload): ToolCallText[] | null => ('calls' in read ? read.calls : null);

/** How a format writes tool calls: in delimited blocks, or as the whole reply (`block` null). */
export interface ToolCallSyntax {
  block: { open: string; close: string } | null;
  /** The text a whole-reply call starts with (after whitespace). */
  replyStart: string;
  /** The calls a block's inner text (or a whole reply) holds; null when it is not well-formed. */
  parse(text: string): ToolCallText[] | null;
}

/** agentrl's byte model: one JSON object per `<tool_call>` block. */
export const agentrlToolCallSyntax: ToolCallSyntax = {
  block: { open: toolCallOpen, close: toolCallClose },
  replyStart: toolCallOpen,
  parse: (inner) => callsOf(readToolCallPayload(inner)),
};

/** The syntax of a chat format, read from how it writes a call (its `assistantText`) and parsed with its own parser. */
export function toolCallSyntax(format: ChatFormat): ToolCallSyntax {
  if (format.name === 'agentrl') return agentrlToolCallSyntax;
  const written = format
    .assistantText({ content: '', toolCalls: [{ id: 'call_0', name: 'probe', arguments: {} }] })
    .trim();
  if (written.startsWith(toolCallOpen) && written.endsWith(toolCallClose)) {
    return {
      block: { open: toolCallOpen, close: toolCallClose },
      replyStart: toolCallOpen,
      parse: (inner) => {
        const parsed = format.parseAssistant(`${toolCallOpen}${inner}${toolCallClose}`);
        return parsed.invalid.length === 0 && parsed.toolCalls.length > 0 ? parsed.toolCalls : null;
      },
    };
  }
  return {
    block: null,
    replyStart: written.slice(0, 1),
    parse: (reply) => {
      const parsed = format.parseAssistant(reply);
      return parsed.toolCalls.length > 0 && parsed.content.trim() === '' ? parsed.toolCalls : null;
    },
  };
}

export interface OutputSplitterOptions {
  /** null: tool calls are not parsed (`<tool_call>` is plain text). */
  syntax: ToolCallSyntax | null;
  /** The client's stop strings: the reply ends before the first one (OpenAI leaves it out). */
  stopStrings?: readonly string[];
  /** The server's turn ends (`PolicyContext.turnEnds`): the reply ends after the first one, which stays in it. */
  turnEnds?: readonly string[];
  /** Call ids are `${idPrefix}${n}`. */
  idPrefix: string;
}

/**
 * Incremental output splitter: `update(fullText)` with the text decoded so far returns what can
 * be emitted now; `finish()` emits the rest. Text from the first stop string on is dropped
 * (OpenAI leaves the stop sequence out); text after the first turn end is dropped (the turn end,
 * what the policy was trained to end its reply with, is kept).
 */
export class OutputSplitter {
  private emitted = 0;
  private stopped = false;
  private calls = 0;
  /** Whole-reply syntax: whether the reply started like a call (undefined: not decided yet). */
  private replyIsCall: boolean | undefined;
  private readonly syntax: ToolCallSyntax | null;
  private readonly stopStrings: readonly string[];
  private readonly turnEnds: readonly string[];
  private readonly idPrefix: string;

  constructor({ syntax, stopStrings = [], turnEnds = [], idPrefix }: OutputSplitterOptions) {
    this.syntax = syntax;
    this.stopStrings = stopStrings;
    this.turnEnds = turnEnds;
    this.idPrefix = idPrefix;
  }

  /** Tool calls emitted so far. */
  get toolCallCount(): number {
    return this.calls;
  }

  update(fullText: string): SplitEvent[] {
    return this.advance(fullText, false);
  }

  finish(fullText: string): SplitEvent[] {
    return this.advance(fullText, true);
  }

  private advance(fullText: string, final: boolean): SplitEvent[] {
    if (this.stopped) return [];
    let text = fullText;
    const end = this.replyEnd(text);
    if (end >= 0) {
      text = text.slice(0, end);
      final = true;
    }
    const events: SplitEvent[] = [];
    const syntax = this.syntax;
    if (syntax !== null && syntax.block === null && this.holdsWholeReply(syntax, text, final, events)) return events;
    const block = this.replyIsCall === false || syntax === null ? null : syntax.block;
    const content = (value: string): void => {
      if (value !== '') events.push({ kind: 'content', text: value });
    };
    for (;;) {
      const open = block === null ? -1 : text.indexOf(block.open, this.emitted);
      if (open < 0 || block === null || syntax === null) break;
      const close = text.indexOf(block.close, open + block.open.length);
      content(text.slice(this.emitted, open));
      this.emitted = open;
      if (close < 0) break;
      const end = close + block.close.length;
      const calls = syntax.parse(text.slice(open + block.open.length, close));
      if (calls === null) content(text.slice(open, end));
      else for (const call of calls) events.push(this.callEvent(call));
      this.emitted = end;
    }
    const pending = text.slice(this.emitted);
    const inBlock = block !== null && pending.startsWith(block.open);
    if (final) {
      content(pending);
      this.emitted = text.length;
      this.stopped = true;
    } else if (!inBlock) {
      const hold = heldBack(pending, [...(block === null ? [] : [block.open]), ...this.stopStrings, ...this.turnEnds]);
      content(pending.slice(0, pending.length - hold));
      this.emitted = text.length - hold;
    }
    return events;
  }

  /** Where the reply's text ends: before the first stop string or after the first turn end, whichever comes first; -1 when neither is in it. */
  private replyEnd(text: string): number {
    const stopAt = firstMatch(text, this.stopStrings);
    const ended = firstMatch(text, this.turnEnds);
    const stopEnd = stopAt === null ? -1 : stopAt.at + this.closedByStop(text, stopAt.at);
    const turnEnd = ended === null ? -1 : ended.at + ended.length;
    if (stopAt === null || (ended !== null && ended.at < stopAt.at)) return turnEnd;
    return stopEnd;
  }

  /**
   * The length of a call block's close that the stop string at `stopAt` starts with, when it closes
   * an open block (a client stopping at `</tool_call>`, as the env trained): the call is parsed with
   * it. 0 otherwise: the stop string is left out, as OpenAI does.
   */
  private closedByStop(text: string, stopAt: number): number {
    const block = this.syntax?.block;
    if (block === null || block === undefined || !text.startsWith(block.close, stopAt)) return 0;
    const open = text.lastIndexOf(block.open, stopAt);
    const opened = open >= this.emitted && text.indexOf(block.close, open + block.open.length) === stopAt;
    return opened ? block.close.length : 0;
  }

  /** Whole-reply syntax: true while the reply is held (or was parsed whole at the end); false once it is plain content. */
  private holdsWholeReply(syntax: ToolCallSyntax, text: string, final: boolean, events: SplitEvent[]): boolean {
    if (this.replyIsCall === undefined) {
      const start = text.trimStart();
      if (start.length < syntax.replyStart.length && syntax.replyStart.startsWith(start) && !final) return true;
      this.replyIsCall = start.startsWith(syntax.replyStart);
    }
    if (!this.replyIsCall) return false;
    if (!final) return true;
    this.stopped = true;
    const calls = syntax.parse(text);
    if (calls === null) events.push(...(text === '' ? [] : [{ kind: 'content' as const, text }]));
    else for (const call of calls) events.push(this.callEvent(call));
    return true;
  }

  private callEvent(call: ToolCallText): SplitEvent {
    return {
      kind: 'tool_call',
      call: { id: `${this.idPrefix}${this.calls++}`, name: call.name, arguments: call.arguments },
    };
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of one of `markers`. */
function heldBack(text: string, markers: readonly string[]): number {
  let hold = 0;
  for (const marker of markers) {
    for (let length = Math.min(marker.length - 1, text.length); length > hold; length--) {
      if (text.endsWith(marker.slice(0, length))) {
        hold = length;
        break;
      }
    }
  }
  return hold;
}

/** The first of `needles` in `text` (the longest one where several start at the same place), or null. */
function firstMatch(text: string, needles: readonly string[]): { at: number; length: number } | null {
  let first: { at: number; length: number } | null = null;
  for (const needle of needles) {
    const at = text.indexOf(needle);
    if (at < 0) continue;
    if (first === null || at < first.at || (at === first.at && needle.length > first.length))
      first = { at, length: needle.length };
  }
  return first;
}
