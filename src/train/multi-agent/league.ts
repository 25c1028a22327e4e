/**
 * Self-play against a league of past selves (AlphaStar's league, Vinyals et al. 2019, "Grandmaster
 * level in StarCraft II using multi-agent reinforcement learning", Nature 575; its prioritized
 * fictitious self-play, PFSP). Every `snapshotEvery` iterations each trained role's policy is
 * frozen into that role's pool; the pool's first entry, the policy before any update, is never
 * evicted and is the fixed opponent progress is measured against. Each iteration a fraction
 * `opponentRate` of the task groups is a league match: one trained role (the learner) plays live,
 * every other role is a snapshot drawn from its pool, uniformly or by PFSP
 *
 *   P(snapshot j) ∝ (1 − w_j)^2        w_j = the learner's win rate against j so far (½ before any game)
 *
 * so opponents the learner still loses to are met more. A game is won when the learner's episode
 * reward beats the mean of its opponents' (a tie counts ½). The pool's win rates are recorded as
 * `league/<role>/winRate` (this iteration's league games) and kept per snapshot in the state.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import type { Rng } from '../../core/rng.ts';
import type { EpisodeOutcome } from '../../rollout/multi-agent-rollout.ts';

export const leagueConfigSchema = z.object({
  snapshotEvery: z
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe('freeze each trained role into its pool every N iterations (0 = no league: every role plays live)'),
  poolSize: z
    .number()
    .int()
    .min(2)
    .default(8)
    .describe('snapshots kept per role (the oldest after the first are evicted; the first is the fixed opponent)'),
  opponentRate: z
    .number()
    .min(0)
    .max(1)
    .default(0.5)
    .describe('fraction of task groups played as league matches (a learner against snapshots)'),
  sampling: z.enum(['uniform', 'pfsp']).default('pfsp').describe('how an opponent snapshot is drawn from its pool'),
});
export type LeagueConfig = z.output<typeof leagueConfigSchema>;

/** A frozen past self: which role it plays, when it was taken, and the games learners played against it. */
export interface SnapshotRecord {
  id: string;
  role: string;
  iteration: number;
  /** Learner wins against it (a tie counts ½) and games. */
  wins: number;
  games: number;
}

/** What resuming the league needs (the snapshots' weights travel beside it, by id). */
export interface LeagueState {
  snapshots: SnapshotRecord[];
}

/** A task group's line-up: live everywhere, or a learner against one snapshot per other role. */
export type Matchup = { kind: 'live' } | { kind: 'league'; learner: string; opponents: Record<string, string> };

export class League {
  readonly snapshots: SnapshotRecord[];

  constructor(
    readonly config: LeagueConfig,
    /** The roles that are trained (learners, and the pools' owners). */
    readonly trainedRoles: readonly string[],
    state?: LeagueState,
  ) {
    this.snapshots = state?.snapshots.map((s) => ({ ...s })) ?? [];
  }

  get enabled(): boolean {
    return this.config.snapshotEvery > 0;
  }

  /** Whether the roles are frozen after `iteration` (iteration 0: the start, before any update). */
  snapshotDue(iteration: number): boolean {
    return this.enabled && iteration % this.config.snapshotEvery === 0;
  }

  /** Records a snapshot of `role` taken after `iteration`; returns it and the ids it evicted. */
  add(role: string, iteration: number): { added: SnapshotRecord; evicted: string[] } {
    const added: SnapshotRecord = { id: `${role}@${iteration}`, role, iteration, wins: 0, games: 0 };
    this.snapshots.push(added);
    const pool = this.pool(role);
    const evicted = pool.slice(1, Math.max(1, pool.length - this.config.poolSize + 1)).map((s) => s.id);
    for (const id of evicted)
      this.snapshots.splice(
        this.snapshots.findIndex((s) => s.id === id),
        1,
      );
    return { added, evicted };
  }

  pool(role: string): SnapshotRecord[] {
    return this.snapshots.filter((s) => s.role === role);
  }

  /** The fixed opponent of `role`: its first snapshot (the start policy). */
  fixed(role: string): SnapshotRecord | undefined {
    return this.pool(role)[0];
  }

  /** Each task group's line-up for an iteration, from an RNG of the run seed and the iteration (so a resumed run draws the same). */
  matchups(groups: number, roles: readonly string[], rng: Rng): Matchup[] {
    return Array.from({ length: groups }, (_, group): Matchup => {
      if (!this.enabled || rng.next() >= this.config.opponentRate) return { kind: 'live' };
      const learner = at(this.trainedRoles, group % this.trainedRoles.length, 'trained roles');
      const opponents: Record<string, string> = {};
      for (const role of roles) {
        if (role === learner) continue;
        const pool = this.pool(role);
        if (pool.length === 0) return { kind: 'live' };
        opponents[role] = this.draw(pool, rng).id;
      }
      return { kind: 'league', learner, opponents };
    });
  }

  /** PFSP (or uniform) draw of one snapshot. */
  private draw(pool: readonly SnapshotRecord[], rng: Rng): SnapshotRecord {
    if (this.config.sampling === 'uniform') return rng.pick(pool);
    const weights = pool.map((s) => (1 - (s.games === 0 ? 0.5 : s.wins / s.games)) ** 2 + 1e-6);
    let r = rng.next() * weights.reduce((a, b) => a + b, 0);
    for (const [i, weight] of weights.entries()) {
      r -= weight;
      if (r <= 0) return at(pool, i, 'pool');
    }
    return at(pool, pool.length - 1, 'pool');
  }

  /**
   * Scores the league games of an iteration (outcomes in episode order, G per group): the
   * snapshots' win counts, and per learner role this iteration's win rate.
   */
  record(outcomes: readonly EpisodeOutcome[], matchups: readonly Matchup[], groupSize: number): Record<string, number> {
    const tally = new Map<string, { wins: number; games: number }>();
    outcomes.forEach((outcome, index) => {
      const matchup = at(matchups, Math.floor(index / groupSize), 'matchups');
      if (matchup.kind !== 'league') return;
      const win = learnerWin(outcome, matchup.learner);
      for (const id of Object.values(matchup.opponents)) {
        const snapshot = this.snapshots.find((s) => s.id === id);
        if (snapshot === undefined) continue;
        snapshot.wins += win;
        snapshot.games += 1;
      }
      const own = tally.get(matchup.learner) ?? { wins: 0, games: 0 };
      tally.set(matchup.learner, { wins: own.wins + win, games: own.games + 1 });
    });
    const metrics: Record<string, number> = {};
    for (const role of this.trainedRoles) {
      metrics[`league/${role}/poolSize`] = this.pool(role).length;
      const own = tally.get(role);
      if (own !== undefined) metrics[`league/${role}/winRate`] = own.wins / own.games;
    }
    return metrics;
  }

  state(): LeagueState {
    return { snapshots: this.snapshots.map((s) => ({ ...s })) };
  }
}

/** 1 when `learner`'s reward beats the mean of the others', ½ on a tie, else 0. */
export function learnerWin(outcome: EpisodeOutcome, learner: string): number {
  const own = outcome.rewards[learner];
  if (own === undefined) throw new InvalidArgumentError(`the outcome has no reward for role "${learner}"`);
  const others = Object.entries(outcome.rewards).filter(([role]) => role !== learner);
  const theirs = others.reduce((sum, [, value]) => sum + value, 0) / Math.max(1, others.length);
  return own > theirs + 1e-9 ? 1 : own < theirs - 1e-9 ? 0 : 0.5;
}
