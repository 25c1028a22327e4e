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
 * action repeats the message. The episode is cut at `maxTurns`. A `ToolTaskEnv` (tool-task.ts)
 * whose replies before the question are answers that move the episode on (`NextTurn`).
 */
import { z } from 'zod';
import { InvalidArgumentError, Rng, type Tool } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import { tool, type ToolRun } from '../../core/tool.ts';
import { actionCharLimits, type ParsedToolCall } from '../action-format.ts';
import { parseOptions } from '../options.ts';
import { ToolTaskEnv, type NextTurn, type ToolTaskEpisode, type ToolTaskSettings, type Verdict } from '../tool-task.ts';
import { answerRubric } from '../tool-task-rewards.ts';

export const memoryRecallOptionsSchema = z
  .strictObject({
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
  })
  .refine((o) => o.facts <= lockerCount(o.lockerDigits), {
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
  {
    facts,
    fillerTurns,
    codeDigits = 4,
    lockerDigits = 2,
  }: { facts: number; fillerTurns: number; codeDigits?: number; lockerDigits?: number },
): MemoryRecallTask {
  const first = 10 ** (lockerDigits - 1);
  const count = lockerCount(lockerDigits);
  if (facts > count)
    throw new InvalidArgumentError(
      `memory-recall: ${facts} facts need more than ${count} lockers of ${lockerDigits} digit(s)`,
    );
  const lockers = rng.shuffle(Array.from({ length: count }, (_, i) => i + first)).slice(0, facts);
  return {
    facts: lockers.map((locker) => ({ locker, code: randomCode(rng, codeDigits) })),
    fillers: Array.from(
      { length: fillerTurns },
      () => `Note: the weather in town ${rng.range(1, 99)} is ${rng.pick(towns)}.`,
    ),
    asked: rng.range(0, facts - 1),
  };
}

interface Message {
  kind: MemoryRecallData['kind'];
  text: string;
}

interface Episode extends ToolTaskEpisode {
  /** The facts and fillers, in order; the question comes after them. */
  messages: Message[];
  question: Message;
  asked: { locker: number; code: string };
  /** Index of the message the next action answers (`messages.length`: the question). */
  current: number;
  memory: string[];
  lastToolResult: string | null;
}

type Settings = Omit<z.output<typeof memoryRecallOptionsSchema>, 'maxTurns'> & ToolTaskSettings;

/** The message the next action answers. */
function currentMessage(episode: Episode): Message {
  return episode.messages[episode.current] ?? episode.question;
}

export class MemoryRecallEnv extends ToolTaskEnv<MemoryRecallTask, Episode, Settings> {
  readonly name = 'memory-recall';
  readonly instructions: string;
  /** R = solved (the asked code: outcome) − formatPenalty · invalid_action (penalty). */
  readonly rewardComponents = answerRubric<Episode>(this.options.formatPenalty);

  constructor(options: MemoryRecallOptions = {}) {
    const parsed = parseOptions(memoryRecallOptionsSchema, options, 'memory-recall');
    const maxTurns = parsed.maxTurns ?? 2 * (parsed.facts + parsed.fillerTurns + 1) + 4;
    // Text-sized actions; a tool result is cut with the whole observation (500 characters).
    super({ ...parsed, maxTurns, maxActionChars: actionCharLimits.text, maxToolResultChars: Number.POSITIVE_INFINITY });
    this.tools = this.options.memoryTools ? this.memoryTools() : [];
    this.instructions = [
      'You will get facts, then other messages, then a question about one fact. Reply <answer>ok</answer> to every message but the question; answer the question with <answer>code</answer>.',
      ...(this.options.memoryTools
        ? [
            'Your context is short: save facts with <tool_call>{"name": "memory_insert", "arguments": {"text": "..."}}</tool_call> and find them with <tool_call>{"name": "memory_search", "arguments": {"query": "..."}}</tool_call>.',
          ]
        : []),
    ].join(' ');
  }

  /** memory_insert and memory_search, on the current episode's memory. */
  private memoryTools(): Tool[] {
    const insert = tool({
      name: 'memory_insert',
      description: 'Saves a passage to long-term memory.',
      inputSchema: z.object({ text: z.string().min(1).max(300) }),
      execute: ({ text }) => {
        const { memory } = this.current();
        memory.push(text);
        return `saved (${memory.length} passages)`;
      },
    });
    const search = tool({
      name: 'memory_search',
      description: 'The 3 saved passages sharing the most words with the query.',
      inputSchema: z.object({ query: z.string().min(1).max(200) }),
      execute: ({ query }) => searchPassages(this.current().memory, query).join(' | ') || 'nothing found',
    });
    return [insert, search];
  }

  protected async start(seed: number, task: MemoryRecallTask | undefined): Promise<{ episode: Episode; text: string }> {
    const chosen = task ?? generateTask(new Rng(seed), this.options);
    const asked = at(chosen.facts, chosen.asked, 'memory-recall task facts');
    const messages: Message[] = [
      ...chosen.facts.map(({ locker, code }) => ({
        kind: 'fact' as const,
        text: `Remember: the code of locker ${locker} is ${code}.`,
      })),
      ...chosen.fillers.map((text) => ({ kind: 'filler' as const, text })),
    ];
    const question: Message = {
      kind: 'question',
      text: `Question: what is the code of locker ${asked.locker}? Reply <answer>code</answer>.`,
    };
    const episode: Episode = {
      messages,
      question,
      asked,
      current: 0,
      memory: [],
      lastToolResult: null,
      turnsUsed: 0,
      ended: false,
    };
    return { episode, text: messageText(episode, '') };
  }

  /** The question's answer is graded; any other answer moves on to the next message. */
  protected async finish(episode: Episode, answer: string): Promise<Verdict | NextTurn> {
    if (currentMessage(episode).kind === 'question') {
      const success = answer.trim() === episode.asked.code;
      return { success, text: success ? 'correct' : 'wrong' };
    }
    episode.current++;
    episode.lastToolResult = null;
    return { next: messageText(episode, '') };
  }

  /** Keeps the result; a call moves on past facts and fillers (saving is the reply), the question waits for an answer. */
  protected override afterToolCall(episode: Episode, run: ToolRun): void {
    episode.lastToolResult = run.ok ? run.text : run.error;
    if (currentMessage(episode).kind !== 'question') episode.current++;
  }

  /** The tool's response, then the message the next action answers. */
  protected override renderToolResult(_call: ParsedToolCall, result: string): string {
    return messageText(this.current(), `<tool_response>${result}</tool_response>\n`);
  }

  /** Why the turn is invalid, then the message again. */
  protected override renderInvalid(reason: string): string {
    return messageText(this.current(), `invalid: ${reason}\n`);
  }

  protected data(episode: Episode): MemoryRecallData {
    const message = currentMessage(episode);
    return {
      kind: message.kind,
      message: message.text,
      ...(message.kind === 'question' ? { locker: episode.asked.locker } : {}),
      lastToolResult: episode.lastToolResult,
      memoryTools: this.options.memoryTools,
      codeDigits: this.options.codeDigits,
      turnsLeft: this.options.maxTurns - episode.turnsUsed,
    };
  }
}

/** An observation text: `prefix` and the message the next action answers, at most 500 characters. */
function messageText(episode: Episode, prefix: string): string {
  return `${prefix}${currentMessage(episode).text}`.slice(0, 500);
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
