/** `agentrl/train`: the trainers (SFT, RL, DPO warm start), their config schemas and presets. */
export { runSft, renderExamples, sftConfigSchema } from './sft.ts';
export { runRl, rlConfigSchema, validate } from './rl.ts';
export { algorithmPresets, algorithmNames } from './algorithm-presets.ts';
export { warmStart, expertDemonstrations } from './warm-start.ts';
export { readChatJsonl, parseChatJsonl } from './chat-data.ts';
export { policySolver, type PolicySolverOptions } from './self-play.ts';
export {
  runMultiAgentRl,
  type MultiAgentCheckpoint,
  type MultiAgentResumeState,
  type MultiAgentRlOptions,
} from './multi-agent/run-multi-agent-rl.ts';
export { encodeRoleCheckpoint, decodeRoleCheckpoint } from './multi-agent/role-checkpoint.ts';
export { League, leagueConfigSchema, learnerWin } from './multi-agent/league.ts';
export { evaluateRoles, type RoleEvaluation } from './multi-agent/role-evaluation.ts';
export { roleEnvironment } from './multi-agent/role-environments.ts';
export type { RoleAssignment } from './multi-agent/role-players.ts';
