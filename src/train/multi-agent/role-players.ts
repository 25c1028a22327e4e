/**
 * The role → policy map of a multi-agent run: each role of the env is trained (its own
 * `TrainablePolicy`, optionally its own KL reference), frozen (a policy that plays and never
 * learns) or scripted (an expert). Roles that name the same policy object share it — they are
 * one trainer, updated once per iteration on both roles' trajectories (the shared-policy arm);
 * roles with different objects never share weights or optimizer state, by construction.
 *
 * Several LoRA adapters over one frozen base: make each role's model with `model.forkAdapters({ seed })`
 * of one LoRA model (the same host base arrays and generation session; its own adapters, moments
 * and RNG), or restore saved roles with `sharedBaseRestorer` (shared-base.ts; docs/multi-agent.md).
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import type { RoleSpec } from '../../envs/role-spec.ts';
import type { Expert } from '../../envs/expert.ts';
import type { Policy, ReferencePolicy, TrainablePolicy } from '../../policy/types.ts';
import type { RolePlayer } from '../../rollout/multi-agent-rollout.ts';

export type RoleAssignment =
  | { policy: TrainablePolicy; reference?: ReferencePolicy }
  | { frozen: Policy }
  | { expert: (episode: { seed: number; index: number }) => Expert };

/** One policy trained this run: the roles it plays, named by them (`alice`, or `alice+bob` when shared). */
export interface Trainer {
  name: string;
  roles: string[];
  policy: TrainablePolicy;
  reference: ReferencePolicy | undefined;
}

const roleNamePattern = /^[a-z][a-z0-9_-]{0,31}$/;

/** The trainers of a role map, in the spec's role order; every role checked to have a player. */
export function trainersOf(spec: RoleSpec, players: Readonly<Record<string, RoleAssignment>>): Trainer[] {
  for (const role of spec.roles) {
    if (!roleNamePattern.test(role))
      throw new InvalidArgumentError(`role name "${role}" is not a metric key (a-z, 0-9, _ or -)`);
    if (players[role] === undefined)
      throw new InvalidArgumentError(
        `no player for role "${role}": give each of ${spec.roles.join(', ')} a policy, a frozen policy or an expert`,
      );
  }
  for (const role of Object.keys(players))
    if (!spec.roles.includes(role))
      throw new InvalidArgumentError(`role "${role}" is not one of the env's roles (${spec.roles.join(', ')})`);
  const trainers = new Map<TrainablePolicy, Trainer>();
  for (const role of spec.roles) {
    const player = players[role];
    if (player === undefined || !('policy' in player)) continue;
    const trainer = trainers.get(player.policy);
    if (trainer === undefined) {
      trainers.set(player.policy, { name: role, roles: [role], policy: player.policy, reference: player.reference });
      continue;
    }
    trainer.roles.push(role);
    trainer.name = trainer.roles.join('+');
  }
  if (trainers.size === 0)
    throw new InvalidArgumentError('no role is trained: give at least one role a TrainablePolicy');
  return [...trainers.values()];
}

/** How a role is played in a rollout. */
export function rolePlayer(assignment: RoleAssignment): RolePlayer {
  if ('policy' in assignment) return { policy: assignment.policy };
  if ('frozen' in assignment) return { policy: assignment.frozen };
  return { expert: assignment.expert };
}
