/**
 * Turn bookkeeping shared by the text envs whose agent calls tools and then answers (math,
 * countdown, code, search, software fix, MCP, self-play): each turn is either
 *
 *   <think>…</think><tool_call>{"name": …, "arguments": {…}}</tool_call>   → the tool's result comes back
 *   <think>…</think><answer>…</answer>                                       → scored, the episode ends
 *
 * An unparsable turn, an unknown tool or arguments that fail the tool's zod schema is invalid:
 * −formatPenalty and an `invalid: <reason>` observation. A tool that throws is not invalid: its
 * error message is the observation (the model sees it). After `maxTurns` turns without an answer
 * the episode is truncated. A subclass says how a task starts (`start`), how an answer scores
 * (`finish`) and what `observation.data` holds (`data`); it may read extra tags (`parseTurn`) and
 * wrap tool results its own way (`renderToolResult`).
 */
import { z } from 'zod';
import { EpisodeEndedError, EpisodeNotStartedError, type Action, type Env, type Observation, type StepResult, type Tool } from '../core/index.ts';
import { actionCharLimits, actionTooLong, parseAction, type ParsedAction, type ParsedToolCall } from './action-format.ts';

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

/** The score of a final answer. */
export interface Verdict {
  reward: number;
  success: boolean;
  /** The last observation's text. */
  text: string;
  info?: Record<string, unknown>;
}

export interface ToolTaskEpisode {
  turnsUsed: number;
  ended: boolean;
}

export abstract class ToolTaskEnv<Task, Episode extends ToolTaskEpisode, Options extends ToolTaskSettings = ToolTaskSettings> implements Env<Task> {
  abstract readonly name: string;
  abstract readonly instructions: string;
  tools: Tool[] = [];
  protected episode: Episode | null = null;

  /** The env's parsed options (the subclass's schema output; the turn settings are read here). */
  constructor(protected readonly options: Options) {}

  /** A new episode and its first observation text. */
  protected abstract start(seed: number, task: Task | undefined): Promise<{ episode: Episode; text: string }>;
  /** Scores a final answer. */
  protected abstract finish(episode: Episode, answer: string, thinking: string | null): Promise<Verdict>;
  /** `observation.data` (for renderers and scripted experts). */
  protected abstract data(episode: Episode): unknown;

  /** Reads one turn's text (already within `maxActionChars`); override to accept extra tags. */
  protected parseTurn(text: string): ParsedAction {
    return parseAction(text, { maxChars: this.options.maxActionChars });
  }

  /** The observation text of a tool result. */
  protected renderToolResult(_call: ParsedToolCall, result: string): string {
    return `<tool_response>${result}</tool_response>`;
  }

  async reset({ seed, task }: { seed: number; task?: Task }): Promise<Observation> {
    const { episode, text } = await this.start(seed, task);
    this.episode = episode;
    return this.observe(episode, text);
  }

  async step(action: Action): Promise<StepResult> {
    const episode = this.episode;
    if (episode === null) throw new EpisodeNotStartedError(this.name);
    if (episode.ended) throw new EpisodeEndedError(this.name);
    episode.turnsUsed++;
    const parsed: ParsedAction =
      actionTooLong(action, this.options.maxActionChars) ??
      (action.toolCall
        ? { kind: 'tool_call', thinking: null, call: { name: action.toolCall.name, arguments: action.toolCall.arguments } }
        : this.parseTurn(action.text));

    if (parsed.kind === 'answer') {
      const verdict = await this.finish(episode, parsed.answer, parsed.thinking);
      episode.ended = true;
      const info = { invalidAction: false, success: verdict.success, ...verdict.info };
      return { observation: this.observe(episode, verdict.text), reward: verdict.reward, done: true, truncated: false, info };
    }
    const outcome = parsed.kind === 'invalid' ? { invalid: parsed.reason } : await this.callTool(parsed.call);
    const truncated = episode.turnsUsed >= this.options.maxTurns && !episode.ended;
    if (truncated) episode.ended = true;
    const ending = truncated ? { success: false } : {};
    if ('invalid' in outcome) {
      const observation = this.observe(episode, `invalid: ${outcome.invalid}`);
      return { observation, reward: -this.options.formatPenalty, done: false, truncated, info: { invalidAction: true, reason: outcome.invalid, ...ending } };
    }
    const observation = this.observe(episode, this.renderToolResult(parsed.kind === 'tool_call' ? parsed.call : { name: '', arguments: {} }, outcome.result));
    return { observation, reward: 0, done: false, truncated, info: { invalidAction: false, tool: outcome.tool, ...ending } };
  }

  /** Runs a tool call: its (clipped) result text, or why the call is invalid. */
  private async callTool(call: ParsedToolCall): Promise<{ tool: string; result: string } | { invalid: string }> {
    const tool = this.tools.find((candidate) => candidate.name === call.name);
    if (tool === undefined) {
      return { invalid: `unknown tool "${call.name.slice(0, 20)}"; allowed: ${this.tools.map((t) => t.name).join(', ') || 'none'}` };
    }
    const input = tool.inputSchema.safeParse(call.arguments);
    if (!input.success) return { invalid: `bad ${tool.name} arguments: ${input.error.issues[0]?.path.join('.') || 'input'} ${input.error.issues[0]?.message ?? ''}`.slice(0, 120) };
    let result: string;
    try {
      const output = await tool.execute(input.data);
      result = typeof output === 'string' ? output : JSON.stringify(output);
    } catch (error) {
      result = `error: ${error instanceof Error ? error.message : String(error)}`;
    }
    return { tool: tool.name, result: clipText(result, this.options.maxToolResultChars) };
  }

  /** The current episode (for tools); throws before `reset`. */
  protected current(): Episode {
    if (this.episode === null) throw new EpisodeNotStartedError(this.name);
    return this.episode;
  }

  private observe(episode: Episode, text: string): Observation {
    return { text, data: this.data(episode) };
  }
}

/** Cuts text to `max` characters, marking the cut with "…". */
export function clipText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
