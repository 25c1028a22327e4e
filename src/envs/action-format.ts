/**
 * The action format every text environment reads (RAGEN moves, Hermes/Qwen tool calls):
 *
 *   <think>free reasoning</think><answer>Right || Up</answer>
 *   <think>free reasoning</think><tool_call>{"name": "calculator", "arguments": {"expression": "2 + 3"}}</tool_call>
 *
 * Strict rules, each broken one giving an `invalid` result with a short reason:
 * - `<think>…</think>` is optional, at most one, and comes first;
 * - then exactly one `<answer>…</answer>` or `<tool_call>…</tool_call>`, last;
 * - nothing but whitespace outside the tags; no tag inside another; tags are lower-case;
 * - an answer is non-empty (trimmed); a tool call is JSON `{"name": string, "arguments": object}`
 *   (`arguments` may be left out and then is `{}`), read by the one rule every `<tool_call>`
 *   reader shares (chat/tool-call-payload.ts).
 * Moves inside an answer are separated by `||` (RAGEN); `parseMoves` matches them
 * case-insensitively against the env's move names, or as 1-based numbers, and allows at most
 * `maxActionsPerTurn` of them.
 *
 * Bounded work per action: an action longer than its env's limit (`actionCharLimits`, or the
 * env's `maxActionChars` option) is invalid before anything reads it, and every parse here is a
 * single linear scan, so no action can stall the loop (docs/action-limits.md).
 */
import type { Action } from '../core/index.ts';
import { readToolCallPayload } from '../chat/tool-call-payload.ts';

/**
 * Default action size limits, in characters (UTF-16 code units) of the action text plus a
 * structured tool call's name and JSON arguments. Grid moves are a word or two after an optional
 * <think>; a text answer or tool call is a sentence or a query; code and patches are source files.
 */
export const actionCharLimits = {
  /** frozen-lake, sokoban, bandit: `<think>…</think><answer>Up</answer>`. */
  moves: 4_096,
  /** math, countdown, search, calculator, webshop, browser-shop, negotiation, memory-recall, mcp-files. */
  text: 16_384,
  /** code, swe, absolute-zero: whole functions and files. */
  code: 65_536,
} as const;

/** Characters of an action: its text plus a structured tool call's name and JSON arguments. */
export function actionChars(action: Action): number {
  const call = action.toolCall;
  if (call === undefined) return action.text.length;
  let argumentChars: number;
  try {
    argumentChars = JSON.stringify(call.arguments ?? {})?.length ?? 0;
  } catch {
    argumentChars = 0; // not JSON (a cycle, a BigInt): the env's argument schema rejects it
  }
  return action.text.length + call.name.length + argumentChars;
}

/** Why an action is over `maxChars` (an invalid turn), or undefined when it fits. */
export function actionTooLong(
  action: Action | string,
  maxChars: number,
): { kind: 'invalid'; reason: string } | undefined {
  const chars = typeof action === 'string' ? action.length : actionChars(action);
  return chars <= maxChars ? undefined : invalid(`action of ${chars} characters is over the limit of ${maxChars}`);
}

export interface ParsedToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export type ParsedAction =
  | { kind: 'answer'; thinking: string | null; answer: string }
  | { kind: 'tool_call'; thinking: string | null; call: ParsedToolCall }
  | { kind: 'invalid'; reason: string };

const tagPattern = /<(\/?)(think|answer|tool_call)>/;

interface Block {
  name: string;
  content: string;
}

/** Parses one policy output in the format above, at most `maxChars` long (default `actionCharLimits.text`). Never throws. */
export function parseAction(
  text: string,
  { maxChars = actionCharLimits.text }: { maxChars?: number } = {},
): ParsedAction {
  const tooLong = actionTooLong(text, maxChars);
  if (tooLong !== undefined) return tooLong;
  // One left-to-right scan of the tags (an exec loop: spreading matchAll into an array costs
  // more than linear time on huge inputs, through its garbage), stopping at the first error.
  const tags = new RegExp(tagPattern.source, 'g');
  const next = (): { closing: boolean; name: string; start: number; end: number } | undefined => {
    const match = tags.exec(text);
    return match === null
      ? undefined
      : { closing: match[1] === '/', name: match[2] as string, start: match.index, end: match.index + match[0].length };
  };
  let open = next();
  if (open === undefined) return invalid(text.trim() === '' ? 'empty output' : 'missing <answer> or <tool_call> tags');

  const blocks: Block[] = [];
  let cursor = 0;
  while (open !== undefined) {
    const outside = text.slice(cursor, open.start).trim();
    if (outside !== '') return invalid(`text outside tags: "${clip(outside)}"`);
    if (open.closing) return invalid(`</${open.name}> without <${open.name}>`);
    const close = next();
    if (close === undefined) return invalid(`<${open.name}> is not closed`);
    if (!close.closing) return invalid(`<${close.name}> inside <${open.name}>`);
    if (close.name !== open.name) return invalid(`<${open.name}> closed by </${close.name}>`);
    blocks.push({ name: open.name, content: text.slice(open.end, close.start) });
    cursor = close.end;
    open = next();
  }
  const rest = text.slice(cursor).trim();
  if (rest !== '') return invalid(`text outside tags: "${clip(rest)}"`);

  const finals = blocks.filter((block) => block.name !== 'think');
  const thoughts = blocks.filter((block) => block.name === 'think');
  if (finals.length === 0) return invalid('missing <answer> or <tool_call>');
  if (finals.length > 1) return invalid('more than one <answer>/<tool_call>');
  if (thoughts.length > 1) return invalid('more than one <think>');

  const [final] = finals;
  if (final === undefined || blocks[blocks.length - 1] !== final) return invalid('<think> must come before the answer');
  const thinking = thoughts[0]?.content.trim() ?? null;
  if (final.name === 'answer') {
    const answer = final.content.trim();
    return answer === '' ? invalid('empty <answer>') : { kind: 'answer', thinking, answer };
  }
  const read = readToolCallPayload(final.content);
  if (!('calls' in read)) return invalid(read.reason);
  return { kind: 'tool_call', thinking, call: read.calls[0] };
}

export type ParsedMoves = { kind: 'moves'; moves: number[] } | { kind: 'invalid'; reason: string };

/**
 * Splits an answer on `||` into move indices (into `moves`). Names match case-insensitively;
 * `1`…`moves.length` are accepted as aliases (RAGEN numbering).
 */
export function parseMoves(
  answer: string,
  options: { moves: readonly string[]; maxActionsPerTurn: number },
): ParsedMoves {
  const { moves, maxActionsPerTurn } = options;
  const parts = answer.split('||').map((part) => part.trim());
  if (parts.some((part) => part === '')) return invalid('empty move');
  if (parts.length > maxActionsPerTurn) {
    return invalid(
      `at most ${maxActionsPerTurn} move${maxActionsPerTurn === 1 ? '' : 's'} per turn, got ${parts.length}`,
    );
  }
  const indices: number[] = [];
  for (const part of parts) {
    let index = moves.findIndex((move) => move.toLowerCase() === part.toLowerCase());
    if (index < 0 && /^[0-9]+$/.test(part) && Number(part) >= 1 && Number(part) <= moves.length)
      index = Number(part) - 1;
    if (index < 0) return invalid(`unknown move "${clip(part)}"; allowed: ${moves.join(', ')} or 1-${moves.length}`);
    indices.push(index);
  }
  return { kind: 'moves', moves: indices };
}

/** Reads an env action that must be moves (at most `maxChars`, default `actionCharLimits.moves`): parses the text, rejects tool calls. */
export function parseMoveAction(
  action: Action,
  options: { moves: readonly string[]; maxActionsPerTurn: number; maxChars?: number },
): ParsedMoves {
  const maxChars = options.maxChars ?? actionCharLimits.moves;
  const tooLong = actionTooLong(action, maxChars);
  if (tooLong !== undefined) return tooLong;
  if (action.toolCall !== undefined) return invalid('no tools here; reply <answer>move</answer>');
  const parsed = parseAction(action.text, { maxChars });
  if (parsed.kind === 'invalid') return parsed;
  if (parsed.kind === 'tool_call') return invalid('no tools here; reply <answer>move</answer>');
  return parseMoves(parsed.answer, options);
}

/** `<think>…</think><answer>…</answer>` (the think block only when given). */
export function formatAnswer(answer: string, thinking?: string): string {
  return `${thinking === undefined ? '' : `<think>${thinking}</think>`}<answer>${answer}</answer>`;
}

/** `<tool_call>{"name": …, "arguments": …}</tool_call>`. */
export function formatToolCall(call: ParsedToolCall, thinking?: string): string {
  const json = JSON.stringify({ name: call.name, arguments: call.arguments });
  return `${thinking === undefined ? '' : `<think>${thinking}</think>`}<tool_call>${json}</tool_call>`;
}

function invalid(reason: string): { kind: 'invalid'; reason: string } {
  return { kind: 'invalid', reason };
}

/** Keeps reasons short: a byte-level model with a small context reads them. */
function clip(text: string, max = 20): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}
