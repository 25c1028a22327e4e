/**
 * Negotiation as two agents with their own policies (rollout/multi-agent-rollout.ts): `alice` and
 * `bob` act as `observation.data.agent` says. Each agent is paid its own value of a deal / 10
 * (`info.agentRewards`; reward 'own': a general-sum game — what the league's win rates compare) or
 * the joint reward, the mean of both (reward 'joint': the cooperative MAGRPO objective with separate
 * policies); the acting agent also pays its own invalid-turn penalty (the step reward less the
 * joint `deal` component).
 */
import { z } from 'zod';
import type { Observation, StepResult } from '../../core/types.ts';
import { at } from '../../core/indexing.ts';
import { parseOptions } from '../options.ts';
import { requireData } from '../require-data.ts';
import type { RoleSpec } from '../role-spec.ts';
import type { NegotiationData } from './env.ts';

export const negotiationRoleNames = ['alice', 'bob'] as const;

export const negotiationRolesSchema = z.strictObject({
  /** What a deal pays each agent: its own value / 10 ('own', competitive) or the joint reward ('joint', cooperative). */
  reward: z.enum(['own', 'joint']).default('own'),
});
export type NegotiationRolesOptions = z.input<typeof negotiationRolesSchema>;

export function negotiationRoles(options: NegotiationRolesOptions = {}): RoleSpec {
  const { reward } = parseOptions(negotiationRolesSchema, options, 'negotiation roles');
  return {
    roles: negotiationRoleNames,
    actingRole(observation: Observation): string {
      const { agent } = requireData<NegotiationData>(observation, 'negotiation', 'agent');
      return at(negotiationRoleNames, agent, 'negotiation agents');
    },
    stepRewards(result: StepResult, acting: string): Record<string, number> {
      const deal = result.info.rewardComponents?.deal ?? 0;
      const paid: Record<string, number> = { [acting]: result.reward - deal };
      const agentRewards = result.info.agentRewards;
      if (!result.done || !Array.isArray(agentRewards)) return paid;
      negotiationRoleNames.forEach((role, agent) => {
        const own = Number(agentRewards[agent] ?? 0);
        paid[role] = (paid[role] ?? 0) + (reward === 'own' ? own : deal);
      });
      return paid;
    },
  };
}
