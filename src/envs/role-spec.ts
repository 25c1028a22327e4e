/**
 * How a multi-agent env names its agents, who acts, and whose reward a step pays: the protocol the
 * multi-agent rollout (rollout/multi-agent-rollout.ts) needs to give each agent its own policy and
 * its own transcript. A plain object beside the env (negotiation/roles.ts, absolute-zero/roles.ts).
 */
import type { Observation, StepResult } from '../core/types.ts';

export interface RoleSpec {
  /** The agents, in a fixed order (metric keys `role/<name>/…`: lower-case, a-z 0-9 _ -). */
  readonly roles: readonly string[];
  /** Which role the observation asks to act (one of `roles`). */
  actingRole(observation: Observation): string;
  /**
   * Each role's share of a step's reward (the acting role's turn penalty, a deal's value to each
   * side). A role left out gets nothing; a role that never acted cannot be paid (it has no turn).
   */
  stepRewards(result: StepResult, acting: string): Readonly<Record<string, number>>;
}
