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
 *   (`arguments` may be left out and then is `{}`).
 * Moves inside an answer are separated by `||` (RAGEN); `parseMoves` matches them
 * case-insensitively against the env's move names, or as 1-based numbers, and allows at most
 * `maxActionsPerTurn` of them.
 */
import type { Action } from '../core/index.ts';

export interface ParsedToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export type ParsedAction =
  | { kind: 'answer'; thinking: string | null; answer: string }
  | { kind: 'tool_call'; thinking: string | null; call: ParsedToolCall }
  | { kind: 'invalid'; reason: string };

const tagPattern = /<(\/?)(think|answer|tool_call)>/g;

interface Block {
  name: string;
  content: string;
}

/** Parses one policy output in the format above. Never throws. */
export function parseAction(text: string): ParsedAction {
  const tags = [...text.matchAll(tagPattern)].map((match) => ({
    closing: match[1] === '/',
    name: match[2] as string,
    start: match.index,
    end: match.index + match[0].length,
  }));
  if (tags.length === 0) return invalid(text.trim() === '' ? 'empty output' : 'missing <answer> or <tool_call> tags');

  const blocks: Block[] = [];
  let cursor = 0;
  for (let i = 0; i < tags.length; i += 2) {
    const open = tags[i]!;
    const outside = text.slice(cursor, open.start).trim();
    if (outside !== '') return invalid(`text outside tags: "${clip(outside)}"`);
    if (open.closing) return invalid(`</${open.name}> without <${open.name}>`);
    const close = tags[i + 1];
    if (close === undefined) return invalid(`<${open.name}> is not closed`);
    if (!close.closing) return invalid(`<${close.name}> inside <${open.name}>`);
    if (close.name !== open.name) return invalid(`<${open.name}> closed by </${close.name}>`);
    blocks.push({ name: open.name, content: text.slice(open.end, close.start) });
    cursor = close.end;
  }
  const rest = text.slice(cursor).trim();
  if (rest !== '') return invalid(`text outside tags: "${clip(rest)}"`);

  const finals = blocks.filter((block) => block.name !== 'think');
  const thoughts = blocks.filter((block) => block.name === 'think');
  if (finals.length === 0) return invalid('missing <answer> or <tool_call>');
  if (finals.length > 1) return invalid('more than one <answer>/<tool_call>');
  if (thoughts.length > 1) return invalid('more than one <think>');
  if (blocks[blocks.length - 1] !== finals[0]) return invalid('<think> must come before the answer');

  const thinking = thoughts.length === 1 ? thoughts[0]!.content.trim() : null;
  const final = finals[0]!;
  if (final.name === 'answer') {
    const answer = final.content.trim();
    return answer === '' ? invalid('empty <answer>') : { kind: 'answer', thinking, answer };
  }
  const call = parseToolCallJson(final.content);
  return typeof call === 'string' ? invalid(call) : { kind: 'tool_call', thinking, call };
}

function parseToolCallJson(content: string): ParsedToolCall | string {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return 'tool_call is not valid JSON';
  }
  const shape = 'tool_call must be {"name": string, "arguments": object}';
  if (!isPlainObject(value)) return shape;
  const { name, arguments: args } = value;
  if (typeof name !== 'string' || name.trim() === '') return shape;
  if (args !== undefined && !isPlainObject(args)) return shape;
  return { name: name.trim(), arguments: args ?? {} };
}

export type ParsedMoves = { kind: 'moves'; moves: number[] } | { kind: 'invalid'; reason: string };

/**
 * Splits an answer on `||` into move indices (into `moves`). Names match case-insensitively;
 * `1`…`moves.length` are accepted as aliases (RAGEN numbering).
 */
export function parseMoves(answer: string, options: { moves: readonly string[]; maxActionsPerTurn: number }): ParsedMoves {
  const { moves, maxActionsPerTurn } = options;
  const parts = answer.split('||').map((part) => part.trim());
  if (parts.some((part) => part === '')) return invalid('empty move');
  if (parts.length > maxActionsPerTurn) {
    return invalid(`at most ${maxActionsPerTurn} move${maxActionsPerTurn === 1 ? '' : 's'} per turn, got ${parts.length}`);
  }
  const indices: number[] = [];
  for (const part of parts) {
    let index = moves.findIndex((move) => move.toLowerCase() === part.toLowerCase());
    if (index < 0 && /^[0-9]+$/.test(part) && Number(part) >= 1 && Number(part) <= moves.length) index = Number(part) - 1;
    if (index < 0) return invalid(`unknown move "${clip(part)}"; allowed: ${moves.join(', ')} or 1-${moves.length}`);
    indices.push(index);
  }
  return { kind: 'moves', moves: indices };
}

/** Reads an env action that must be moves: parses the text, rejects tool calls. */
export function parseMoveAction(action: Action, options: { moves: readonly string[]; maxActionsPerTurn: number }): ParsedMoves {
  if (action.toolCall !== undefined) return invalid('no tools here; reply <answer>move</answer>');
  const parsed = parseAction(action.text);
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keeps reasons short: a byte-level model with a small context reads them. */
function clip(text: string, max = 20): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}
