/**
 * The multi-agent envs a role map can train, by name: each env's factory and its `RoleSpec`.
 * Absolute Zero's proposer is paid by the solve rate of the SOLVER role's policy (`policySolver`),
 * so the proposer learns to pose tasks at the edge of what the solver can do; negotiation pays each
 * agent its own value of a deal (or the joint reward).
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import type { Env } from '../../core/types.ts';
import { makeAbsoluteZero, type AbsoluteZeroOptions } from '../../envs/absolute-zero/env.ts';
import { absoluteZeroRoles } from '../../envs/absolute-zero/roles.ts';
import { makeNegotiation, type NegotiationOptions } from '../../envs/negotiation/env.ts';
import { negotiationRoles, type NegotiationRolesOptions } from '../../envs/negotiation/roles.ts';
import type { RoleSpec } from '../../envs/role-spec.ts';
import type { Policy } from '../../policy/types.ts';
import { policySolver } from '../self-play.ts';

export const multiAgentEnvironmentNames = ['negotiation', 'absolute-zero'] as const;

export interface RoleEnvironment {
  env: () => Env;
  roles: RoleSpec;
}

export function roleEnvironment(
  name: string,
  {
    envOptions = {},
    roleReward = 'own',
    solver,
  }: { envOptions?: object; roleReward?: NegotiationRolesOptions['reward']; solver?: Policy } = {},
): RoleEnvironment {
  if (name === 'negotiation')
    return {
      env: () => makeNegotiation(envOptions as NegotiationOptions),
      roles: negotiationRoles({ reward: roleReward }),
    };
  if (name === 'absolute-zero') {
    const resources = solver === undefined ? {} : { solver: policySolver(solver) };
    return { env: () => makeAbsoluteZero(envOptions as AbsoluteZeroOptions, resources), roles: absoluteZeroRoles() };
  }
  throw new InvalidArgumentError(
    `a policy per role needs a multi-agent env (${multiAgentEnvironmentNames.join(', ')}); ${name} has one agent`,
    { env: name },
  );
}
