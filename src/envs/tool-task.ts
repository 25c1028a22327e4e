/**
 * Turn bookkeeping shared by the text envs whose agent calls tools and then answers (calculator,
 * math, countdown, code, search, software fix, MCP, self-play, memory recall): each turn is either
 *
 *   <think>…</think><tool_call>{"name": …, "arguments": {…}}</tool_call>   → the tool's result comes back
 *   <think>…</think><answer>…</answer>                                       → scored, the episode ends
 *
 * The tool runs through `runTool` (core/tool.ts). An unparsable turn, an unknown tool or arguments
 * that fail the tool's zod schema is invalid: −formatPenalty and an `invalid: <reason>` observation.
 * A tool that throws is not invalid: its error message is the observation (the model sees it).
 * After `maxTurns` turns without an answer the episode is truncated (episode-turns.ts). A subclass
 * says how a task starts (`start`), how an answer scores (`finish`, which may instead move the
 * episode on: `NextTurn`), what the agent may see in `observation.data` (`data`) and what only the
 * expert and the trainer may see in `observation.privileged` (`privileged`: the answer, hidden
 * tests; never sent by the env server); it may read extra tags
 * (`parseTurn`), record a tool's result (`afterToolCall`) and word tool results and invalid turns
 * its own way (`renderToolResult`, `renderInvalid`).
 *
 * Rewards (issue 31): the subclass's `rewardComponents` rubric scores every step on a `ToolTaskStep`
 * — the episode after the turn and what the turn was (invalid, a tool call, a reply that moved on,
 * a scored answer) — and the step reward is its total (step-reward.ts).
 */
import { z } from 'zod';
import {
  EpisodeNotStartedError,
  type Action,
  type Env,
  type Observation,
  type StepResult,
  type Tool,
} from '../core/index.ts';
import { clipText, runTool, type ToolRun } from '../core/tool.ts';
import type { Rubric } from '../rewards/rubric.ts';
import {
  actionCharLimits,
  actionTooLong,
  parseAction,
  type ParsedAction,
  type ParsedToolCall,
} from './action-format.ts';
import { closeTurn, openTurn } from './episode-turns.ts';
import { scoreStep } from './step-reward.ts';

/** Option fields every tool-task env has (spread into its options schema). */
export const toolTaskOptionsShape = {
  /** Turns per episode (tool calls, answers and invalid turns). */
  maxTurns: z.number().int().positive().default(4),
  /** Subtracted from the reward of an invalid turn. */
  formatPenalty: z.number().min(0).default(0),
  /** Longest tool result shown, in characters (longer ones are cut with "…"). */
  maxToolResultChars: z.number().int().positive().default(400),
  /** Longest action read, in characters (text + a tool call's JSON); a longer one is an invalid turn, unread (docs/action-limits.md). */
  maxActionChars: z.number().int().positive().default(actionCharLimits.code),
} as const;

export interface ToolTaskSettings {
  maxTurns: number;
  formatPenalty: number;
  maxToolResultChars: number;
  maxActionChars: number;
}

/** The verdict on a final answer (its reward is the rubric's, from the episode and this verdict). */
export interface Verdict {
  success: boolean;
  /** The last observation's text. */
  text: string;
  info?: Record<string, unknown>;
}

/** An answer that does not end the episode (memory recall: the reply to a message before the question): the next observation's text. */
export interface NextTurn {
  next: string;
}

export interface ToolTaskEpisode {
  turnsUsed: number;
  ended: boolean;
}

/** What a turn was, for the reward functions. */
export type ToolTaskTurn =
  | { kind: 'invalid'; reason: string }
  | { kind: 'tool'; run: ToolRun }
  /** An answer that moved the episode on (`NextTurn`). */
  | { kind: 'reply' }
  | { kind: 'answer'; success: boolean; thinking: string | null };

/** What a tool-task env's reward functions see of one step: the episode after the turn, and the turn. */
export interface ToolTaskStep<Episode> {
  readonly episode: Episode;
  readonly turn: ToolTaskTurn;
}

export abstract class ToolTaskEnv<
  Task,
  Episode extends ToolTaskEpisode,
  Options extends ToolTaskSettings = ToolTaskSettings,
> implements Env<Task>
{
  abstract readonly name: string;
  abstract readonly instructions: string;
  tools: Tool[] = [];
  /** The step reward's named components (names, weights, kinds); scored on every step. */
  abstract readonly rewardComponents: Rubric<ToolTaskStep<Episode>>;
  protected episode: Episode | null = null;

  /** The env's parsed options (the subclass's schema output; the turn settings are read here). */
  constructor(protected readonly options: Options) {}

  /** A new episode and its first observation text. */
  protected abstract start(seed: number, task: Task | undefined): Promise<{ episode: Episode; text: string }>;
  /** Scores a final answer (or, for an answer that does not end the episode, gives the next observation). */
  protected abstract finish(episode: Episode, answer: string, thinking: string | null): Promise<Verdict | NextTurn>;
  /** `observation.data`: what the agent may see (for renderers and scripted experts). */
  protected abstract data(episode: Episode): unknown;

  /** `observation.privileged`: what the agent must not see (the answer, hidden tests), for the scripted expert. Default: none. */
  protected privileged(_episode: Episode): unknown {
    return undefined;
  }

  /** Reads one turn's text (already within `maxActionChars`); override to accept extra tags. */
  protected parseTurn(text: string): ParsedAction {
    return parseAction(text, { maxChars: this.options.maxActionChars });
  }

  /** The observation text of a tool's (clipped) result; `failed` when the tool threw (`result` is then its error). */
  protected renderToolResult(_call: ParsedToolCall, result: string, _failed: boolean): string {
    return `<tool_response>${result}</tool_response>`;
  }

  /** The observation text of an invalid turn. */
  protected renderInvalid(reason: string): string {
    return `invalid: ${reason}`;
  }

  /** Records a tool call that ran (or threw) in the episode (before the step is scored). Default: nothing. */
  protected afterToolCall(_episode: Episode, _run: ToolRun): void {}

  async reset({ seed, task }: { seed: number; task?: Task }): Promise<Observation> {
    const { episode, text } = await this.start(seed, task);
    this.episode = episode;
    return this.observe(episode, text);
  }

  async step(action: Action): Promise<StepResult> {
    const episode = openTurn(this.name, this.episode);
    const parsed = this.readTurn(action);
    if (parsed.kind === 'invalid') return this.invalidTurn(episode, parsed.reason);
    if (parsed.kind === 'answer') return this.answerTurn(episode, parsed.answer, parsed.thinking);
    const run = await runTool(this.tools, parsed.call);
    if (!run.ok && run.kind !== 'tool-error') return this.invalidTurn(episode, run.error);
    this.afterToolCall(episode, run);
    const result = clipText(run.ok ? run.text : run.error, this.options.maxToolResultChars);
    const close = closeTurn(episode, this.options.maxTurns, { invalidAction: false, tool: run.tool });
    const observation = this.observe(episode, this.renderToolResult(parsed.call, result, !run.ok));
    return this.scored(episode, { kind: 'tool', run }, { observation, ...close });
  }

  /** The current episode (for tools); throws before `reset`. */
  protected current(): Episode {
    if (this.episode === null) throw new EpisodeNotStartedError(this.name);
    return this.episode;
  }

  /** An over-long action, a structured tool call, or the text read by `parseTurn`. */
  private readTurn(action: Action): ParsedAction {
    const tooLong = actionTooLong(action, this.options.maxActionChars);
    if (tooLong !== undefined) return tooLong;
    if (action.toolCall === undefined) return this.parseTurn(action.text);
    return {
      kind: 'tool_call',
      thinking: null,
      call: { name: action.toolCall.name, arguments: action.toolCall.arguments },
    };
  }

  private invalidTurn(episode: Episode, reason: string): Promise<StepResult> {
    const close = closeTurn(episode, this.options.maxTurns, { invalidAction: true, reason });
    const observation = this.observe(episode, this.renderInvalid(reason));
    return this.scored(episode, { kind: 'invalid', reason }, { observation, ...close });
  }

  private async answerTurn(episode: Episode, answer: string, thinking: string | null): Promise<StepResult> {
    const verdict = await this.finish(episode, answer, thinking);
    if ('next' in verdict) {
      const close = closeTurn(episode, this.options.maxTurns, { invalidAction: false });
      return this.scored(episode, { kind: 'reply' }, { observation: this.observe(episode, verdict.next), ...close });
    }
    episode.ended = true;
    const info = { invalidAction: false, success: verdict.success, ...verdict.info };
    const observation = this.observe(episode, verdict.text);
    const turn = { kind: 'answer', success: verdict.success, thinking } as const;
    return this.scored(episode, turn, { observation, done: true, truncated: false, info });
  }

  /** The step with its reward: the rubric's total on this turn (step-reward.ts). */
  private scored(episode: Episode, turn: ToolTaskTurn, step: Omit<StepResult, 'reward'>): Promise<StepResult> {
    return scoreStep(this.name, this.rewardComponents, { episode, turn }, step);
  }

  private observe(episode: Episode, text: string): Observation {
    const privileged = this.privileged(episode);
    return privileged === undefined
      ? { text, data: this.data(episode) }
      : { text, data: this.data(episode), privileged };
  }
}
