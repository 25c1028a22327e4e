import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { at } from '../../core/indexing.ts';
import { joinCalls, sessionTrajectory, type RecordedCall } from './session-trajectory.ts';

function call(prompt: number[], tokens: number[], logprob = -0.5): RecordedCall {
  return {
    messages: [],
    prompt,
    tokens,
    logprobs: tokens.map(() => logprob),
    finishReason: 'stop',
    content: 'x',
    toolCalls: [],
  };
}

describe('joinCalls: a session’s calls → segments by exact prefix continuation', () => {
  test('a prompt that extends prompt + completion joins the segment; only the new ids are appended', () => {
    const joined = joinCalls([call([1, 2], [3, 4]), call([1, 2, 3, 4, 5, 6], [7])]);
    assert.equal(joined.prefixBreaks, 0);
    assert.equal(joined.segments.length, 1);
    assert.deepEqual(joined.segments[0], {
      turn: 1,
      tokens: [1, 2, 3, 4, 5, 6, 7],
      lossMask: [0, 0, 1, 1, 0, 0, 1],
      logprobs: [0, 0, -0.5, -0.5, 0, 0, -0.5],
    });
    assert.deepEqual(
      joined.turns.map((turn) => [turn.start, turn.end]),
      [
        [2, 4],
        [6, 7],
      ],
    );
  });

  test('a rewritten history starts a new segment and counts the break', () => {
    const joined = joinCalls([call([1, 2], [3]), call([1, 9, 3, 5], [6]), call([1, 9, 3, 5, 6, 8], [4])]);
    assert.equal(joined.prefixBreaks, 1);
    assert.deepEqual(
      joined.segments.map((segment) => segment.tokens),
      [
        [1, 2, 3],
        [1, 9, 3, 5, 6, 8, 4],
      ],
    );
    assert.deepEqual(
      joined.segments.map((segment) => segment.turn),
      [0, 2],
    );
    // turn spans index the concatenated record
    assert.deepEqual(
      joined.turns.map((turn) => [turn.start, turn.end]),
      [
        [2, 3],
        [7, 8],
        [9, 10],
      ],
    );
  });

  test('a prompt shorter than what came before is a break, not a crash', () => {
    assert.equal(joinCalls([call([1, 2, 3], [4]), call([1, 2], [5])]).prefixBreaks, 1);
  });

  test('sessionTrajectory puts the reward on the last turn and is always segmented', () => {
    const trajectory = sessionTrajectory([call([1, 2], [3]), call([7], [8, 9])], {
      reward: 0.75,
      success: true,
      groupId: 'g',
      seed: 4,
    });
    assert.equal(trajectory.totalReward, 0.75);
    const last = at(trajectory.turns, trajectory.turns.length - 1, 'turns');
    assert.equal(last.reward, 0.75);
    assert.equal(at(trajectory.turns, 0, 'turns').reward, 0);
    assert.equal(trajectory.tokens.length, trajectory.lossMask.length);
    assert.equal(trajectory.tokenRewards[last.end - 1], 0.75);
    assert.equal(trajectory.segments?.length, 2);
    assert.equal(trajectory.prefixBreaks, 1);
  });
});
