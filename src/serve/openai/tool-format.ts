/**
 * The tool-call text format of the built-in model, and the splitter that turns its (streamed)
 * output into OpenAI content and `tool_calls`.
 *
 * Tools reach the model as a system message (model/tools-prompt.ts, re-exported here).
 *
 * The model calls a tool by writing the same block the environments read (envs/action-format.ts)
 * and the chat template renders (model/chat-template.ts `renderToolCall`):
 *
 *   <tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>
 *
 * Each well-formed block becomes one OpenAI tool call (`arguments` re-serialised as a JSON
 * string); a block whose JSON is malformed stays in the content. When streaming, text that might
 * be the start of a `<tool_call>` block or of a stop string is held back until it is decided.
 */
import type { ToolCall } from '../../core/types.ts';

export { toolsPrompt, withToolsPrompt } from '../../model/tools-prompt.ts';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

export type SplitEvent = { kind: 'content'; text: string } | { kind: 'tool_call'; call: ToolCall };

/**
 * Incremental output splitter: `update(fullText)` with the text decoded so far returns what can
 * be emitted now; `finish()` emits the rest. With `parseTools` off, `<tool_call>` is plain text.
 * Text from the first stop string on is dropped (OpenAI leaves the stop sequence out).
 */
export class OutputSplitter {
  private emitted = 0;
  private stopped = false;
  private calls = 0;
  private readonly parseTools: boolean;
  private readonly stopStrings: readonly string[];
  private readonly idPrefix: string;

  constructor({ parseTools, stopStrings = [], idPrefix }: { parseTools: boolean; stopStrings?: readonly string[]; idPrefix: string }) {
    this.parseTools = parseTools;
    this.stopStrings = stopStrings;
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
    const stopAt = firstIndex(text, this.stopStrings);
    if (stopAt >= 0) {
      text = text.slice(0, stopAt);
      final = true;
    }
    const events: SplitEvent[] = [];
    const content = (value: string): void => {
      if (value !== '') events.push({ kind: 'content', text: value });
    };
    for (;;) {
      const open = this.parseTools ? text.indexOf(OPEN, this.emitted) : -1;
      if (open < 0) break;
      const close = text.indexOf(CLOSE, open + OPEN.length);
      content(text.slice(this.emitted, open));
      this.emitted = open;
      if (close < 0) break;
      const end = close + CLOSE.length;
      const call = parseCall(text.slice(open + OPEN.length, close), `${this.idPrefix}${this.calls}`);
      if (call === null) content(text.slice(open, end));
      else {
        events.push({ kind: 'tool_call', call });
        this.calls++;
      }
      this.emitted = end;
    }
    const pending = text.slice(this.emitted);
    const open = this.parseTools && pending.startsWith(OPEN);
    if (final) {
      content(pending);
      this.emitted = text.length;
      this.stopped = true;
    } else if (!open) {
      const hold = heldBack(pending, [...(this.parseTools ? [OPEN] : []), ...this.stopStrings]);
      content(pending.slice(0, pending.length - hold));
      this.emitted = text.length - hold;
    }
    return events;
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

function firstIndex(text: string, needles: readonly string[]): number {
  let first = -1;
  for (const needle of needles) {
    const at = text.indexOf(needle);
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  return first;
}

function parseCall(json: string, id: string): ToolCall | null {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const { name, arguments: args = {} } = value as { name?: unknown; arguments?: unknown };
    if (typeof name !== 'string' || name === '' || typeof args !== 'object' || args === null || Array.isArray(args)) return null;
    return { id, name, arguments: args as Record<string, unknown> };
  } catch {
    return null;
  }
}
