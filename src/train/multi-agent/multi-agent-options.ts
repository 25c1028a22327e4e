/**
 * The `agentrl train` options of multi-agent training (flags come from this schema): a policy per
 * role or one shared, what a negotiation deal pays each agent, and the league of past selves.
 */
import { z } from 'zod';

export const multiAgentOptionsShape = {
  policies: z
    .enum(['shared', 'per-role'])
    .default('shared')
    .describe(
      "'shared': one policy plays every agent in one trajectory; 'per-role': each agent of a multi-agent env (negotiation, absolute-zero) has its own policy, trained side by side",
    ),
  roleReward: z
    .enum(['own', 'joint'])
    .default('own')
    .describe('negotiation with --policies per-role: each agent is paid its own value of a deal, or the joint reward'),
  leagueEvery: z
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe('--policies per-role: freeze each role into its league pool every N iterations (0 = no league)'),
  leaguePool: z.number().int().min(2).default(8).describe('league snapshots kept per role (the first always)'),
  leagueOpponentRate: z
    .number()
    .min(0)
    .max(1)
    .default(0.5)
    .describe('fraction of task groups played against league snapshots'),
};
