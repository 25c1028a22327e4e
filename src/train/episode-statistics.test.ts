import { test } from 'node:test';
import assert from 'node:assert/strict';
import { episodeStatistics } from './episode-statistics.ts';

const episode = (groupId: string, totalReward: number, generated: number, prompt = 3) => ({
  groupId,
  totalReward,
  lossMask: [...new Array(prompt).fill(0), ...new Array(generated).fill(1)],
});

test('episode statistics: response length counts generated tokens only; reward spread is the mean within-group std', () => {
  const statistics = episodeStatistics([
    episode('a', 1, 4),
    episode('a', 0, 6),
    episode('b', 1, 2),
    episode('b', 1, 8),
    episode('c', 0.5, 10),
  ]);
  assert.deepEqual(statistics, {
    responseLength: 6,
    responseLengthMax: 10,
    sampledTokens: 30,
    // group a: rewards 1, 0 → std 0.5; group b: 1, 1 → 0; group c has one episode and is not counted.
    rewardStdWithinGroup: 0.25,
    uniformRewardGroupFraction: 0.5,
  });
});

test('episode statistics: no group of two leaves the group statistics out; no episodes, nothing', () => {
  assert.deepEqual(episodeStatistics([episode('a', 1, 2), episode('b', 0, 4)]), {
    responseLength: 3,
    responseLengthMax: 4,
    sampledTokens: 6,
  });
  assert.equal(episodeStatistics([]), undefined);
});
