import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { Rng } from '../../core/rng.ts';
import type { EpisodeOutcome } from '../../rollout/multi-agent-rollout.ts';
import { League, leagueConfigSchema, learnerWin } from './league.ts';

const outcome = (alice: number, bob: number): EpisodeOutcome => ({
  seed: 0,
  groupId: 'negotiation:0',
  rewards: { alice, bob },
  success: false,
  truncated: false,
  turns: 2,
});

test('a win beats the opponents’ mean reward, a tie is ½; an unknown learner is refused', () => {
  assert.equal(learnerWin(outcome(0.8, 0.6), 'alice'), 1);
  assert.equal(learnerWin(outcome(0.8, 0.6), 'bob'), 0);
  assert.equal(learnerWin(outcome(0, 0), 'alice'), 0.5);
  assert.throws(() => learnerWin(outcome(0, 0), 'carol'), InvalidArgumentError);
});

test('the pool keeps the first snapshot (the fixed opponent) and the newest, poolSize in all', () => {
  const league = new League(leagueConfigSchema.parse({ snapshotEvery: 2, poolSize: 3 }), ['alice', 'bob']);
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((i) => league.snapshotDue(i)),
    [true, false, true, false, true],
  );
  const evicted = [0, 2, 4, 6].map((iteration) => league.add('bob', iteration).evicted);
  assert.deepEqual(evicted, [[], [], [], ['bob@2']]);
  assert.deepEqual(
    league.pool('bob').map((s) => s.id),
    ['bob@0', 'bob@4', 'bob@6'],
  );
  assert.equal(league.fixed('bob')?.id, 'bob@0');
  assert.equal(league.fixed('alice'), undefined);
});

test('matchups: no league → all live; a league match puts a snapshot in every other role; win rates recorded', () => {
  const off = new League(leagueConfigSchema.parse({}), ['alice', 'bob']);
  assert.deepEqual(off.matchups(3, ['alice', 'bob'], new Rng(1)), [
    { kind: 'live' },
    { kind: 'live' },
    { kind: 'live' },
  ]);

  const league = new League(leagueConfigSchema.parse({ snapshotEvery: 1, opponentRate: 1 }), ['alice', 'bob']);
  league.add('alice', 0);
  league.add('bob', 0);
  const matchups = league.matchups(2, ['alice', 'bob'], new Rng(1));
  assert.deepEqual(matchups, [
    { kind: 'league', learner: 'alice', opponents: { bob: 'bob@0' } },
    { kind: 'league', learner: 'bob', opponents: { alice: 'alice@0' } },
  ]);
  // Groups of 2: Alice wins once and ties once against bob@0; Bob loses twice against alice@0.
  const metrics = league.record([outcome(1, 0), outcome(0, 0), outcome(0.9, 0.1), outcome(0.7, 0.3)], matchups, 2);
  assert.deepEqual(metrics, {
    'league/alice/poolSize': 1,
    'league/alice/winRate': 0.75,
    'league/bob/poolSize': 1,
    'league/bob/winRate': 0,
  });
  assert.deepEqual(
    league.state().snapshots.map((s) => [s.id, s.wins, s.games]),
    [
      ['alice@0', 0, 2],
      ['bob@0', 1.5, 2],
    ],
  );
});

test('PFSP draws the snapshots the learner loses to more often (weight (1 − w)²), uniform does not', () => {
  const draws = (sampling: 'uniform' | 'pfsp') => {
    const league = new League(leagueConfigSchema.parse({ snapshotEvery: 1, opponentRate: 1, sampling }), ['alice']);
    league.add('bob', 0);
    league.add('bob', 1);
    const [easy, hard] = league.snapshots;
    if (easy === undefined || hard === undefined) throw new TypeError('two snapshots');
    Object.assign(easy, { wins: 9, games: 10 });
    Object.assign(hard, { wins: 1, games: 10 });
    const rng = new Rng(3);
    const picks = league.matchups(2000, ['alice', 'bob'], rng).map((m) => (m.kind === 'league' ? m.opponents.bob : ''));
    return picks.filter((id) => id === 'bob@1').length / picks.length;
  };
  // (1 − 0.1)² / ((1 − 0.9)² + (1 − 0.1)²) = 0.81 / 0.82 ≈ 0.988.
  assert.ok(Math.abs(draws('pfsp') - 0.988) < 0.01, `pfsp ${draws('pfsp')}`);
  assert.ok(Math.abs(draws('uniform') - 0.5) < 0.04, `uniform ${draws('uniform')}`);
});
