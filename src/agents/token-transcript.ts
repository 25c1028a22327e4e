/**
 * A conversation recorded in token space — the one recorder behind the rollout's episodes
 * (rollout/episode.ts), the scaffolds' `Transcript` and MemGPT's steps — so that what they record
 * is a `Trajectory` the RL trainer uses unchanged (ids end to end, never re-tokenized):
 *
 *   const transcript = new TokenTranscript();
 *   transcript.appendContext(prompt);                                        // lossMask 0, log-prob 0
 *   transcript.appendReply(generation, { closing: replyClosing(format, generation.tokens) });
 *   transcript.observe('the observation');  transcript.reward(1);
 *   transcript.trajectory({ success: true, truncated: false });
 *
 * - a reply's ids are the policy's own generation (lossMask 1, its sampling log-probs) and make
 *   its turn's span [start, end); what closes it (`replyClosing`: the rest of the template's turn
 *   end after a stop token, all of it for a reply cut by `maxNewTokens` or a stop string) has
 *   lossMask 0, like every other appended id (prompts, reply openings, observations, tools);
 * - `reward(r)` adds r to the latest turn and puts it on that turn's last generated token;
 * - with `segments: true` each reply is also recorded as a segment — the exact prompt it was
 *   generated from, the reply and its closing — for a policy that sees a bounded or rebuilt context.
 *
 * It lives in agents/ (it needs only core and chat) so that both the scaffolds and rollout/, which
 * imports agents/, can use it without an upward import.
 */
import type { ChatFormat } from '../chat/chat-format.ts';
import { stopTokensOf } from '../chat/policy-chat-format.ts';
import { at } from '../core/indexing.ts';
import type { Trajectory, TrajectorySegment, Turn } from '../core/types.ts';

/** A reply the policy generated (or the expert's, in expert mode): its ids, their log-probs and its text. */
export interface ReplyTokens {
  tokens: readonly number[];
  logprobs: readonly number[];
  text: string;
}

/** How a recorded conversation ended, and the labels its trajectory carries. */
export interface TranscriptEnding {
  success: boolean;
  truncated: boolean;
  groupId: string;
  seed: number;
}

/**
 * What follows a reply in the template: the rest of the turn end when the reply ended in one of
 * the format's stop tokens (ChatML's "\n" after `<|im_end|>`, nothing for agentrl's `<|end|>`),
 * the whole turn end when it was cut (by `maxNewTokens` or a stop string).
 */
export function replyClosing(format: ChatFormat, reply: readonly number[]): number[] {
  const last = reply.at(-1);
  return last !== undefined && stopTokensOf(format).includes(last) ? format.turnEnd.slice(1) : [...format.turnEnd];
}

export class TokenTranscript {
  readonly tokens: number[] = [];
  readonly lossMask: number[] = [];
  readonly logprobs: number[] = [];
  readonly tokenRewards: number[] = [];
  readonly turns: Turn[] = [];
  /** Per reply, the exact context it was generated from, then the reply and its closing (`segments: true`). */
  readonly segments: TrajectorySegment[] | undefined;

  constructor({ segments = false }: { segments?: boolean } = {}) {
    this.segments = segments ? [] : undefined;
  }

  /** Appends ids the policy did not generate (prompt, reply opening, observation, tool result): lossMask 0, log-prob 0. */
  appendContext(tokens: readonly number[]): void {
    this.push(tokens, 0);
  }

  /**
   * Appends a reply (lossMask 1, its log-probs) as a new turn, then `closing` (lossMask 0). With
   * segments, `prompt` is the context the reply was generated from (default: everything before it).
   */
  appendReply(
    reply: ReplyTokens,
    { closing = [], prompt }: { closing?: readonly number[]; prompt?: readonly number[] } = {},
  ): Turn {
    if (this.segments !== undefined) {
      const context = prompt ?? [...this.tokens];
      this.segments.push({
        turn: this.turns.length,
        tokens: [...context, ...reply.tokens, ...closing],
        lossMask: [...context.map(() => 0), ...reply.tokens.map(() => 1), ...closing.map(() => 0)],
        logprobs: [
          ...context.map(() => 0),
          ...reply.tokens.map((_, i) => reply.logprobs[i] ?? 0),
          ...closing.map(() => 0),
        ],
      });
    }
    const start = this.tokens.length;
    this.push(reply.tokens, 1, reply.logprobs);
    const turn: Turn = {
      start,
      end: this.tokens.length,
      reward: 0,
      action: reply.text,
      observation: '',
      invalidAction: false,
    };
    this.turns.push(turn);
    this.push(closing, 0);
    return turn;
  }

  /** Notes on the latest turn the observation(s) that answered it (joined by "\n"), and whether its action was invalid. */
  observe(observation: string | readonly string[], { invalidAction = false }: { invalidAction?: boolean } = {}): void {
    const turn = this.turns.at(-1);
    if (turn === undefined) return;
    for (const text of typeof observation === 'string' ? [observation] : observation) {
      turn.observation = turn.observation === '' ? text : `${turn.observation}\n${text}`;
    }
    turn.invalidAction ||= invalidAction;
  }

  /** Adds a reward to the latest turn, on its last generated token. */
  reward(value: number): void {
    const turn = this.turns.at(-1);
    if (turn === undefined) return;
    const last = turn.end - 1;
    const before = at(this.tokenRewards, last, 'tokenRewards');
    turn.reward += value;
    this.tokenRewards[last] = before + value;
  }

  /** The recorded conversation as a trajectory (copies: the transcript may grow on). */
  trajectory({ success, truncated, groupId, seed }: TranscriptEnding): Trajectory {
    return {
      tokens: [...this.tokens],
      lossMask: [...this.lossMask],
      logprobs: [...this.logprobs],
      tokenRewards: [...this.tokenRewards],
      turns: this.turns.map((turn) => ({ ...turn })),
      totalReward: this.turns.reduce((sum, turn) => sum + turn.reward, 0),
      success,
      groupId,
      seed,
      truncated,
      ...(this.segments === undefined ? {} : { segments: this.segments.map((segment) => ({ ...segment })) }),
    };
  }

  private push(tokens: readonly number[], mask: 0 | 1, logprobs: readonly number[] = []): void {
    tokens.forEach((token, i) => {
      this.tokens.push(token);
      this.lossMask.push(mask);
      this.logprobs.push(mask === 1 ? (logprobs[i] ?? 0) : 0);
      this.tokenRewards.push(0);
    });
  }
}
