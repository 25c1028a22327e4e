/**
 * The league's frozen past selves as weights: each snapshot's `saveState` bytes by id (what a
 * checkpoint stores), and the frozen policy restored from them on first use (`restore`: e.g.
 * `BuiltinPolicy.fromState`, given the shared base for LoRA states). Evicted snapshots are
 * dropped, bytes and policy, so memory stays at `poolSize` policies per role at most.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import type { Policy } from '../../policy/types.ts';
import type { League } from './league.ts';
import type { Trainer } from './role-players.ts';

export type RestoreSnapshot = (state: Uint8Array, role: string) => Promise<Policy>;

export class SnapshotPool {
  private readonly states: Map<string, Uint8Array>;
  private readonly policies = new Map<string, Promise<Policy>>();

  constructor(
    private readonly league: League,
    private readonly restore: RestoreSnapshot | undefined,
    states?: ReadonlyMap<string, Uint8Array>,
  ) {
    this.states = new Map(states ?? []);
    for (const { id } of league.snapshots)
      if (!this.states.has(id))
        throw new InvalidArgumentError(`the league state names snapshot ${id}, but its weights are missing`);
  }

  /** Freezes each of the trainer's roles into its pool after `iteration`. */
  async take(trainer: Trainer, iteration: number): Promise<void> {
    const state = await trainer.policy.saveState();
    for (const role of trainer.roles) {
      const { added, evicted } = this.league.add(role, iteration);
      this.states.set(added.id, state);
      for (const id of evicted) {
        this.states.delete(id);
        this.policies.delete(id);
      }
    }
  }

  /** The frozen policy of snapshot `id`. */
  policy(id: string, role: string): Promise<Policy> {
    const cached = this.policies.get(id);
    if (cached !== undefined) return cached;
    const state = this.states.get(id);
    if (state === undefined) throw new InvalidArgumentError(`no snapshot ${id} in the pool`);
    if (this.restore === undefined)
      throw new InvalidArgumentError('a league needs restoreSnapshot (frozen policies from saveState bytes)');
    const restored = this.restore(state, role);
    this.policies.set(id, restored);
    return restored;
  }

  /** The snapshots' bytes by id (for a checkpoint). */
  stateBytes(): Map<string, Uint8Array> {
    return new Map(this.states);
  }
}
