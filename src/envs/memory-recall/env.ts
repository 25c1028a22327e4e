/**
 * Memory recall: facts arrive early in a long episode and the question comes later, so a policy
 * that sees a bounded history (rollout `historyTurns`) or a short context has to keep them in
 * memory. One message per turn:
 *
 *   Remember: the code of locker 7 is 4817.          (facts, `facts` of them)
 *   Note: the weather in town 3 is rainy.            (distractors, `fillerTurns` of them)
 *   Question: what is the code of locker 7? Reply <answer>code</answer>.
 *
 * Any answer moves on to the next message; the question's answer is graded (reward 1 when it is
 * the code). With `memoryTools` the env offers `memory_insert({text})` and `memory_search({query})`
 * (top 3 passages by shared words): a call runs, and its `<tool_response>` comes with the next
 * message (or with the question again). Without them a tool call is an invalid turn. A malformed
 * action repeats the message. The episode is cut at `maxTurns`.
 */
import { z } from 'zod';
import { EpisodeEndedError, EpisodeNotStartedError, InvalidArgumentError, Rng, type Action, type Env, type Observation, type StepResult, type Tool } from '../../core/index.ts';
import { tool } from '../../core/tool.ts';
import { actionCharLimits, actionTooLong, parseAction, type ParsedToolCall } from '../action-format.ts';
import { parseOptions } from '../options.ts';

export const memoryRecallOptionsSchema = z.strictObject({
  /** Facts given at the start (one is asked about). */
  facts: z.number().int().min(1).max(20).default(3),
  /** Digits of each locker number (1: lockers 1–9; 2: lockers 10–99). */
  lockerDigits: z.number().int().min(1).max(2).default(2),
  /** Digits of each code (chance of guessing one: 1 in 9·10^(digits−1)). */
  codeDigits: z.number().int().min(1).max(8).default(4),
  /** Distractor messages between the facts and the question. */
  fillerTurns: z.number().int().min(0).max(100).default(6),
  /** Offer memory_insert / memory_search. */
  memoryTools: z.boolean().default(true),
  /** Turns per episode at most (default: 2 per message + 4). */
  maxTurns: z.number().int().positive().optional(),
  /** Subtracted from the reward of an invalid turn. */
  formatPenalty: z.number().min(0).default(0),
}).refine((o) => o.facts <= lockerCount(o.lockerDigits), {
  message: 'more facts than lockers of lockerDigits digits (1 digit: at most 9 facts)',
  path: ['facts'],
});
export type MemoryRecallOptions = z.input<typeof memoryRecallOptionsSchema>;

export interface MemoryRecallTask {
  /** locker number → code */
  facts: { locker: number; code: string }[];
  fillers: string[];
  /** Index into `facts` of the one asked about. */
  asked: number;
}

/** `observation.data`: what the expert reads. */
export interface MemoryRecallData {
  kind: 'fact' | 'filler' | 'question';
  message: string;
  /** The asked locker (question only). */
  locker?: number;
  lastToolResult: string | null;
  memoryTools: boolean;
  codeDigits: number;
  turnsLeft: number;
}

const insertTool = tool({
  name: 'memory_insert',
  description: 'Saves a passage to long-term memory.',
  inputSchema: z.object({ text: z.string().min(1).max(300) }),
  execute: ({ text }) => text,
});
const searchTool = tool({
  name: 'memory_search',
  description: 'The 3 saved passages sharing the most words with the query.',
  inputSchema: z.object({ query: z.string().min(1).max(200) }),
  execute: ({ query }) => query,
});

/** Locker numbers with `digits` digits (1–9, 10–99). */
function lockerCount(digits: number): number {
  return 10 ** digits - 10 ** (digits - 1);
}

const towns = ['rainy', 'sunny', 'windy', 'foggy', 'snowy'];

/** A random code of `digits` digits, no leading zero (a task's codes, and the memoryless expert's guess). */
export function randomCode(rng: Rng, digits: number): string {
  return String(rng.range(10 ** (digits - 1), 10 ** digits - 1));
}

export function generateTask(
  rng: Rng,
  { facts, fillerTurns, codeDigits = 4, lockerDigits = 2 }: { facts: number; fillerTurns: number; codeDigits?: number; lockerDigits?: number },
): MemoryRecallTask {
  const first = 10 ** (lockerDigits - 1);
  const count = lockerCount(lockerDigits);
  if (facts > count) throw new InvalidArgumentError(`memory-recall: ${facts} facts need more than ${count} lockers of ${lockerDigits} digit(s)`);
  const lockers = rng.shuffle(Array.from({ length: count }, (_, i) => i + first)).slice(0, facts);
  return {
    facts: lockers.map((locker) => ({ locker, code: randomCode(rng, codeDigits) })),
    fillers: Array.from({ length: fillerTurns }, () => `Note: the weather in town ${rng.range(1, 99)} is ${rng.pick(towns)}.`),
    asked: rng.range(0, facts - 1),
  };
}

interface Episode {
  task: MemoryRecallTask;
  messages: { kind: MemoryRecallData['kind']; text: string }[];
  /** Index of the message the next action answers. */
  current: number;
  memory: string[];
  lastToolResult: string | null;
  turnsUsed: number;
  ended: boolean;
}

export class MemoryRecallEnv implements Env<MemoryRecallTask> {
  readonly name = 'memory-recall';
  readonly tools: Tool[];
  readonly instructions: string;
  private readonly options: z.output<typeof memoryRecallOptionsSchema>;
  private episode: Episode | null = null;

  constructor(options: MemoryRecallOptions = {}) {
    this.options = parseOptions(memoryRecallOptionsSchema, options, 'memory-recall');
    this.tools = this.options.memoryTools ? [insertTool, searchTool] : [];
    this.instructions = [
      'You will get facts, then other messages, then a question about one fact. Reply <answer>ok</answer> to every message but the question; answer the question with <answer>code</answer>.',
      ...(this.options.memoryTools
        ? ['Your context is short: save facts with <tool_call>{"name": "memory_insert", "arguments": {"text": "..."}}</tool_call> and find them with <tool_call>{"name": "memory_search", "arguments": {"query": "..."}}</tool_call>.']
        : []),
    ].join(' ');
  }

  private get maxTurns(): number {
    return this.options.maxTurns ?? 2 * (this.options.facts + this.options.fillerTurns + 1) + 4;
  }

  async reset({ seed, task }: { seed: number; task?: MemoryRecallTask }): Promise<Observation> {
    const chosen = task ?? generateTask(new Rng(seed), this.options);
    const asked = chosen.facts[chosen.asked]!;
    const messages = [
      ...chosen.facts.map(({ locker, code }) => ({ kind: 'fact' as const, text: `Remember: the code of locker ${locker} is ${code}.` })),
      ...chosen.fillers.map((text) => ({ kind: 'filler' as const, text })),
      { kind: 'question' as const, text: `Question: what is the code of locker ${asked.locker}? Reply <answer>code</answer>.` },
    ];
    this.episode = { task: chosen, messages, current: 0, memory: [], lastToolResult: null, turnsUsed: 0, ended: false };
    return this.observe(this.episode, '');
  }

  async step(action: Action): Promise<StepResult> {
    const episode = this.episode;
    if (episode === null) throw new EpisodeNotStartedError(this.name);
    if (episode.ended) throw new EpisodeEndedError(this.name);
    episode.turnsUsed++;
    const parsed = actionTooLong(action, actionCharLimits.text) ?? (action.toolCall ? { kind: 'tool_call' as const, call: action.toolCall } : parseAction(action.text));
    const truncated = episode.turnsUsed >= this.maxTurns;
    const message = episode.messages[episode.current]!;

    if (parsed.kind === 'answer') {
      if (message.kind === 'question') {
        const success = parsed.answer.trim() === episode.task.facts[episode.task.asked]!.code;
        episode.ended = true;
        return { observation: { text: success ? 'correct' : 'wrong', data: this.observe(episode, '').data }, reward: success ? 1 : 0, done: true, truncated: false, info: { invalidAction: false, success } };
      }
      episode.current++;
      episode.lastToolResult = null;
      episode.ended = truncated;
      return { observation: this.observe(episode, ''), reward: 0, done: false, truncated, info: { invalidAction: false, ...(truncated ? { success: false } : {}) } };
    }
    const reason = parsed.kind === 'invalid' ? parsed.reason : this.callTool(episode, parsed.call);
    episode.ended = truncated;
    const ending = truncated ? { success: false } : {};
    if (reason !== null) {
      return { observation: this.observe(episode, `invalid: ${reason}\n`), reward: -this.options.formatPenalty, done: false, truncated, info: { invalidAction: true, reason, ...ending } };
    }
    // A tool call moves on past facts and fillers (saving is the reply); the question waits for an answer.
    if (message.kind !== 'question') episode.current++;
    return { observation: this.observe(episode, `<tool_response>${episode.lastToolResult}</tool_response>\n`), reward: 0, done: false, truncated, info: { invalidAction: false, ...ending } };
  }

  /** Runs a memory call; returns why it is invalid, or null (its result is then in `lastToolResult`). */
  private callTool(episode: Episode, call: ParsedToolCall): string | null {
    if (!this.options.memoryTools) return 'no tools here; reply <answer>...</answer>';
    const tool = this.tools.find((candidate) => candidate.name === call.name);
    if (tool === undefined) return `unknown tool "${call.name.slice(0, 20)}"; allowed: memory_insert, memory_search`;
    const input = tool.inputSchema.safeParse(call.arguments);
    if (!input.success) return `${tool.name} arguments must be ${tool === insertTool ? '{"text": string}' : '{"query": string}'}`;
    if (tool === insertTool) {
      episode.memory.push((input.data as { text: string }).text);
      episode.lastToolResult = `saved (${episode.memory.length} passages)`;
    } else {
      episode.lastToolResult = searchPassages(episode.memory, (input.data as { query: string }).query).join(' | ') || 'nothing found';
    }
    return null;
  }

  private observe(episode: Episode, prefix: string): Observation {
    const message = episode.messages[episode.current]!;
    const asked = episode.task.facts[episode.task.asked]!;
    const data: MemoryRecallData = {
      kind: message.kind,
      message: message.text,
      ...(message.kind === 'question' ? { locker: asked.locker } : {}),
      lastToolResult: episode.lastToolResult,
      memoryTools: this.options.memoryTools,
      codeDigits: this.options.codeDigits,
      turnsLeft: this.maxTurns - episode.turnsUsed,
    };
    return { text: `${prefix}${message.text}`.slice(0, 500), data };
  }
}

/** The 3 passages sharing the most words with the query (ties: newer first); none that share nothing. */
export function searchPassages(passages: readonly string[], query: string): string[] {
  const wordsOf = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);
  const wanted = wordsOf(query);
  return passages
    .map((text, index) => ({ text, index, score: [...wordsOf(text)].filter((word) => wanted.has(word)).length }))
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || b.index - a.index)
    .slice(0, 3)
    .map((entry) => entry.text);
}

export function makeMemoryRecall(options: MemoryRecallOptions = {}): MemoryRecallEnv {
  return new MemoryRecallEnv(options);
}
