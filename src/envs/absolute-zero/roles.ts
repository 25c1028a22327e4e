/**
 * Absolute Zero's two roles as separate policies (rollout/multi-agent-rollout.ts): the `proposer`
 * acts on the propose turn and is paid its learnability reward (with a `solver` — e.g. the solver
 * role's policy through `policySolver` — else 0), the `solver` acts on the solve turn and is paid
 * `solved`; each pays its own invalid-turn penalty. Every step's reward goes to the role that acted.
 */
import type { Observation, StepResult } from '../../core/types.ts';
import { requireData } from '../require-data.ts';
import type { RoleSpec } from '../role-spec.ts';
import type { AbsoluteZeroData } from './env.ts';

export const absoluteZeroRoleNames = ['proposer', 'solver'] as const;

export function absoluteZeroRoles(): RoleSpec {
  return {
    roles: absoluteZeroRoleNames,
    actingRole(observation: Observation): string {
      const { role } = requireData<AbsoluteZeroData>(observation, 'absolute-zero', 'role');
      return role === 'propose' ? 'proposer' : 'solver';
    },
    stepRewards(result: StepResult, acting: string): Record<string, number> {
      return { [acting]: result.reward };
    },
  };
}
