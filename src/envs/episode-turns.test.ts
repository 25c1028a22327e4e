import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EpisodeEndedError, EpisodeNotStartedError } from '../core/errors.ts';
import { closeTurn, openTurn, runningEpisode } from './episode-turns.ts';

test('runningEpisode / openTurn: typed errors before reset and after the end; a turn is counted', () => {
  assert.throws(() => runningEpisode('demo', null), EpisodeNotStartedError);
  assert.throws(() => openTurn('demo', { turnsUsed: 0, ended: true }), EpisodeEndedError);
  assert.throws(() => openTurn('demo', null), /demo: step\(\) called before reset\(\)/);
  const episode = { turnsUsed: 0, ended: false };
  assert.equal(openTurn('demo', episode), episode);
  assert.equal(episode.turnsUsed, 1);
  assert.equal(runningEpisode('demo', episode), episode);
  assert.equal(episode.turnsUsed, 1, 'runningEpisode counts nothing');
});

test('closeTurn: the episode goes on until maxTurns are used, then is truncated with success false', () => {
  const episode = { turnsUsed: 1, ended: false };
  assert.deepEqual(closeTurn(episode, 2, { invalidAction: false }), {
    done: false,
    truncated: false,
    info: { invalidAction: false },
  });
  assert.equal(episode.ended, false);
  episode.turnsUsed = 2;
  assert.deepEqual(closeTurn(episode, 2, { invalidAction: true, reason: 'x' }, { agentRewards: [0, 0] }), {
    done: false,
    truncated: true,
    info: { invalidAction: true, reason: 'x', success: false, agentRewards: [0, 0] },
  });
  assert.equal(episode.ended, true);
  const endedByTheTurn = { turnsUsed: 5, ended: true };
  assert.equal(closeTurn(endedByTheTurn, 2, {}).truncated, false, 'an episode the turn ended is not also truncated');
});
