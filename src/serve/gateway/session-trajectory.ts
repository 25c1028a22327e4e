/**
 * A session's recorded calls → one token-level `Trajectory` (ids as sampled, never re-tokenized).
 *
 * Calls join by exact prefix continuation: when call k+1's prompt ids start with everything so far
 * (call k's prompt + its sampled ids, token for token), only the new ids (tool results, the next
 * user message, the `<|assistant|>` header) are appended, with lossMask 0. Otherwise — a client
 * or template that rewrote history: dropped messages, edited text, re-serialised tool arguments —
 * a new segment starts with that call's whole prompt, and the break is counted (`prefixBreaks`).
 *
 * The trajectory is always segmented (`segments`, one per unbroken run of calls): each segment is
 * a sequence the policy really continued, so the trainer scores every sampled id in the context
 * it was sampled in. `tokens` / `lossMask` / `logprobs` are the segments one after another (a
 * record). One turn per call; the session's reward sits on the last turn (and on the segment
 * holding it: `segment.turn` is the last turn of its segment).
 */
import type { Message, ToolCall, Trajectory, TrajectorySegment, Turn } from '../../core/types.ts';
import { assistantText } from '../../chat/chat-template.ts';

/** One chat completion as the gateway recorded it. */
export interface RecordedCall {
  /** The request's messages (agentrl form). */
  messages: Message[];
  /** The exact prompt ids the model continued. */
  prompt: number[];
  /** The sampled ids (the stop id included when one ended the reply). */
  tokens: number[];
  /** Sampling log-prob of each sampled id. */
  logprobs: number[];
  finishReason: 'stop' | 'length' | 'tool_calls';
  content: string | null;
  toolCalls: ToolCall[];
}

export interface JoinedCalls {
  segments: TrajectorySegment[];
  turns: Turn[];
  /** Calls whose prompt did not extend the previous prompt + completion. */
  prefixBreaks: number;
}

export function joinCalls(calls: readonly RecordedCall[]): JoinedCalls {
  const segments: TrajectorySegment[] = [];
  const turns: Turn[] = [];
  let prefixBreaks = 0;
  let offset = 0; // tokens of the closed segments, for turn spans in the concatenated record
  let current: TrajectorySegment | undefined;
  calls.forEach((call, index) => {
    if (current !== undefined && startsWith(call.prompt, current.tokens)) {
      append(current, call.prompt.slice(current.tokens.length), 0);
    } else {
      if (current !== undefined) {
        prefixBreaks++;
        offset += current.tokens.length;
      }
      current = { turn: index, tokens: [], lossMask: [], logprobs: [] };
      segments.push(current);
      append(current, call.prompt, 0);
    }
    const start = offset + current.tokens.length;
    append(current, call.tokens, 1, call.logprobs);
    current.turn = index;
    turns.push({ start, end: offset + current.tokens.length, reward: 0, action: assistantText({ content: call.content ?? '', toolCalls: call.toolCalls }), observation: '', invalidAction: false });
  });
  return { segments, turns, prefixBreaks };
}

/** The session as a trajectory scored `reward` (on its last turn). */
export function sessionTrajectory(
  calls: readonly RecordedCall[],
  { reward, success, groupId, seed }: { reward: number; success: boolean; groupId: string; seed: number },
): Trajectory & { prefixBreaks: number } {
  const { segments, turns, prefixBreaks } = joinCalls(calls);
  const tokens = segments.flatMap((segment) => segment.tokens);
  const tokenRewards = tokens.map(() => 0);
  const last = turns.at(-1);
  if (last !== undefined) {
    last.reward = reward;
    tokenRewards[last.end - 1] = reward;
  }
  return {
    tokens,
    lossMask: segments.flatMap((segment) => segment.lossMask),
    logprobs: segments.flatMap((segment) => segment.logprobs),
    tokenRewards,
    turns,
    totalReward: last === undefined ? 0 : reward,
    success,
    groupId,
    seed,
    truncated: false,
    segments,
    prefixBreaks,
  };
}

/** The conversation as it ended: the last call's messages and the reply it got. */
export function finalMessages(calls: readonly RecordedCall[]): Message[] {
  const last = calls.at(-1);
  if (last === undefined) return [];
  const reply: Message = { role: 'assistant', content: last.content ?? '', ...(last.toolCalls.length > 0 ? { toolCalls: last.toolCalls } : {}) };
  return [...last.messages, reply];
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

function append(segment: TrajectorySegment, ids: readonly number[], mask: 0 | 1, logprobs?: readonly number[]): void {
  ids.forEach((id, i) => {
    segment.tokens.push(id);
    segment.lossMask.push(mask);
    segment.logprobs.push(mask === 1 ? (logprobs?.[i] ?? 0) : 0);
  });
}
