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
 *
 * The record is written by the one `TokenTranscript` (agents/token-transcript.ts) the rollout and
 * the scaffolds record with: a call's new prompt ids as context, its sampled ids as a reply; each
 * segment is a slice of that record.
 */
import { TokenTranscript } from '../../agents/token-transcript.ts';
import { assistantText } from '../../chat/chat-template.ts';
import type { Message, ToolCall, Trajectory, TrajectorySegment, Turn } from '../../core/types.ts';

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

/** The calls in one `TokenTranscript` (the record), and where each segment of it starts. */
interface RecordedSession {
  transcript: TokenTranscript;
  /** Per segment: its first token in the record and its last turn. */
  segmentStarts: { start: number; turn: number }[];
}

function recordCalls(calls: readonly RecordedCall[]): RecordedSession {
  const transcript = new TokenTranscript();
  const segmentStarts: RecordedSession['segmentStarts'] = [];
  calls.forEach((call, index) => {
    let segment = segmentStarts.at(-1);
    if (segment !== undefined && continues(call.prompt, transcript.tokens, segment.start)) {
      transcript.appendContext(call.prompt.slice(transcript.tokens.length - segment.start));
    } else {
      segment = { start: transcript.tokens.length, turn: index };
      segmentStarts.push(segment);
      transcript.appendContext(call.prompt);
    }
    const action = assistantText({ content: call.content ?? '', toolCalls: call.toolCalls });
    transcript.appendReply({ tokens: call.tokens, logprobs: call.logprobs, text: action });
    segment.turn = index;
  });
  return { transcript, segmentStarts };
}

/** Each unbroken run of calls as the sequence the policy continued: a slice of the record. */
function segmentsOf({ transcript, segmentStarts }: RecordedSession): TrajectorySegment[] {
  return segmentStarts.map(({ start, turn }, k) => {
    const end = segmentStarts[k + 1]?.start ?? transcript.tokens.length;
    return {
      turn,
      tokens: transcript.tokens.slice(start, end),
      lossMask: transcript.lossMask.slice(start, end),
      logprobs: transcript.logprobs.slice(start, end),
    };
  });
}

export function joinCalls(calls: readonly RecordedCall[]): JoinedCalls {
  const session = recordCalls(calls);
  return {
    segments: segmentsOf(session),
    turns: session.transcript.turns,
    prefixBreaks: Math.max(0, session.segmentStarts.length - 1),
  };
}

/** The session as a trajectory scored `reward` (on its last turn). */
export function sessionTrajectory(
  calls: readonly RecordedCall[],
  { reward, success, groupId, seed }: { reward: number; success: boolean; groupId: string; seed: number },
): Trajectory & { prefixBreaks: number } {
  const session = recordCalls(calls);
  session.transcript.reward(reward);
  return {
    ...session.transcript.trajectory({ success, truncated: false, groupId, seed }),
    segments: segmentsOf(session),
    prefixBreaks: Math.max(0, session.segmentStarts.length - 1),
  };
}

/** The conversation as it ended: the last call's messages and the reply it got. */
export function finalMessages(calls: readonly RecordedCall[]): Message[] {
  const last = calls.at(-1);
  if (last === undefined) return [];
  const reply: Message = {
    role: 'assistant',
    content: last.content ?? '',
    ...(last.toolCalls.length > 0 ? { toolCalls: last.toolCalls } : {}),
  };
  return [...last.messages, reply];
}

/** Whether `prompt` starts with the record's ids from `from` on (the segment so far), token for token. */
function continues(prompt: readonly number[], record: readonly number[], from: number): boolean {
  if (record.length - from > prompt.length) return false;
  for (let i = from; i < record.length; i++) if (prompt[i - from] !== record[i]) return false;
  return true;
}
