/** `agentrl/train`: the trainers (SFT, RL, DPO warm start), their config schemas and presets. */
export { runSft, renderExamples, sftConfigSchema } from './sft.ts';
export { runRl, rlConfigSchema, validate } from './rl.ts';
export { algorithmPresets, algorithmNames } from './algorithm-presets.ts';
export { warmStart, expertDemonstrations } from './warm-start.ts';
export { readChatJsonl, parseChatJsonl } from './chat-data.ts';
export { policySolver, type PolicySolverOptions } from './self-play.ts';
