/**
 * Pins what the gateway records for a session — the trajectory `sessionTrajectory` writes from its
 * calls, byte for byte (fixtures/session-trajectories.json, taken before it recorded through
 * `TokenTranscript`): continuation, a rewritten history, a shorter prompt, tool calls, missing
 * log-probs, an empty session.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { ToolCall } from '../../core/types.ts';
import { joinCalls, sessionTrajectory, type RecordedCall } from './session-trajectory.ts';

const toolCall: ToolCall = { id: 'call_0', name: 'add', arguments: { a: 1, b: 2 } };

function call(prompt: number[], tokens: number[], extra: Partial<RecordedCall> = {}): RecordedCall {
  return {
    messages: [{ role: 'user', content: 'q' }],
    prompt,
    tokens,
    logprobs: tokens.map((_, i) => -0.25 * (i + 1)),
    finishReason: 'stop',
    content: `reply ${tokens.length}`,
    toolCalls: [],
    ...extra,
  };
}

/** The sessions pinned, each with its score. */
export const pinnedSessions: Record<string, { calls: RecordedCall[]; score: Parameters<typeof sessionTrajectory>[1] }> =
  {
    continued: {
      calls: [
        call([1, 2, 3], [10, 11], { content: null, toolCalls: [toolCall], finishReason: 'tool_calls' }),
        call([1, 2, 3, 10, 11, 4, 5], [12, 13, 14]),
        call([1, 2, 3, 10, 11, 4, 5, 12, 13, 14, 6], [15], { logprobs: [] }),
      ],
      score: { reward: 1, success: true, groupId: 'g-1', seed: 7 },
    },
    rewritten: {
      calls: [
        call([1, 2], [3]),
        call([1, 9, 3, 5], [6, 7], { finishReason: 'length' }),
        call([1, 9, 3, 5, 6, 7, 8], [4]),
        call([1, 9], [2], { content: 'short', toolCalls: [toolCall] }),
      ],
      score: { reward: -0.5, success: false, groupId: 'g-2', seed: 0 },
    },
    empty: { calls: [], score: { reward: 2, success: false, groupId: 'g-3', seed: 1 } },
  };

type PinnedRecord = { trajectory: string; prefixBreaks: number };

test('the gateway records each pinned session exactly as before (every id, mask, log-prob, reward, turn and segment)', () => {
  const fixture = new URL('./fixtures/session-trajectories.json', import.meta.url);
  const expected = JSON.parse(readFileSync(fixture, 'utf8')) as Record<string, PinnedRecord>;
  assert.deepEqual(Object.keys(expected), Object.keys(pinnedSessions));
  for (const [name, { calls, score }] of Object.entries(pinnedSessions)) {
    assert.equal(JSON.stringify(sessionTrajectory(calls, score)), expected[name]?.trajectory, name);
    assert.equal(joinCalls(calls).prefixBreaks, expected[name]?.prefixBreaks, name);
  }
});
