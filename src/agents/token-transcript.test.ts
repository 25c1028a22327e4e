import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentrlChatFormat } from '../chat/chat-format.ts';
import { tinyChatmlFormat } from '../chat/tiny-chatml.ts';
import { IndexOutOfRangeError } from '../core/errors.ts';
import { replyClosing, TokenTranscript } from './token-transcript.ts';

test('TokenTranscript: context lossMask 0, a reply lossMask 1 with its log-probs and its turn span, the closing lossMask 0, rewards on the last reply token', () => {
  const transcript = new TokenTranscript();
  transcript.appendContext([10, 11]);
  const turn = transcript.appendReply({ tokens: [20, 21], logprobs: [-0.5, -0.25], text: 'ab' }, { closing: [30] });
  assert.deepEqual(turn, { start: 2, end: 4, reward: 0, action: 'ab', observation: '', invalidAction: false });
  transcript.observe(['x', 'y'], { invalidAction: true });
  transcript.observe('z');
  transcript.reward(1);
  transcript.reward(-0.25);
  const trajectory = transcript.trajectory({ success: true, truncated: false, groupId: 'g', seed: 3 });
  assert.deepEqual(trajectory, {
    tokens: [10, 11, 20, 21, 30],
    lossMask: [0, 0, 1, 1, 0],
    logprobs: [0, 0, -0.5, -0.25, 0],
    tokenRewards: [0, 0, 0, 0.75, 0],
    turns: [{ start: 2, end: 4, reward: 0.75, action: 'ab', observation: 'x\ny\nz', invalidAction: true }],
    totalReward: 0.75,
    success: true,
    groupId: 'g',
    seed: 3,
    truncated: false,
  });
  transcript.appendContext([40]);
  assert.equal(trajectory.tokens.length, 5, 'the trajectory is a copy');
});

test('TokenTranscript with segments: each reply with the context it was generated from (default: everything before it)', () => {
  const transcript = new TokenTranscript({ segments: true });
  transcript.appendContext([1, 2]);
  transcript.appendReply({ tokens: [3], logprobs: [-1], text: 'c' }, { closing: [9] });
  transcript.appendContext([4]);
  transcript.appendReply({ tokens: [5, 6], logprobs: [-2, -3], text: 'ef' }, { prompt: [1, 4] });
  const { segments, turns } = transcript.trajectory({ success: false, truncated: true, groupId: 'g', seed: 0 });
  assert.deepEqual(segments, [
    { turn: 0, tokens: [1, 2, 3, 9], lossMask: [0, 0, 1, 0], logprobs: [0, 0, -1, 0] },
    { turn: 1, tokens: [1, 4, 5, 6], lossMask: [0, 0, 1, 1], logprobs: [0, 0, -2, -3] },
  ]);
  assert.deepEqual(
    turns.map(({ start, end }) => [start, end]),
    [
      [2, 3],
      [5, 7],
    ],
  );
});

test('TokenTranscript: observe and reward before any reply do nothing; a reward with no token before it is refused', () => {
  const transcript = new TokenTranscript();
  transcript.observe('x');
  transcript.reward(1);
  assert.deepEqual(transcript.trajectory({ success: false, truncated: false, groupId: 'g', seed: 0 }).totalReward, 0);
  transcript.appendReply({ tokens: [], logprobs: [], text: '' });
  assert.throws(() => transcript.reward(1), IndexOutOfRangeError);
});

test('replyClosing: the rest of the turn end after a stop token, the whole turn end after a cut reply', () => {
  const chatml = tinyChatmlFormat();
  assert.deepEqual(chatml.turnEnd.length, 2);
  assert.deepEqual(replyClosing(chatml, [70, 2]), chatml.turnEnd.slice(1));
  assert.deepEqual(replyClosing(chatml, [70]), [...chatml.turnEnd]);
  assert.deepEqual(replyClosing(chatml, []), [...chatml.turnEnd]);
  const agentrl = agentrlChatFormat();
  assert.deepEqual(replyClosing(agentrl, [70, ...agentrl.turnEnd]), []);
  assert.deepEqual(replyClosing(agentrl, [70]), [...agentrl.turnEnd]);
});
