/**
 * agentrl's public API. (The CLI is `bin/agentrl.js`; the tensor library stays inside src/model.)
 */
export * from './core/index.ts';
export * from './chat/index.ts';
export { TransformerModel, type ScoreResult, type StepReport } from './model/model.ts';
export { generate, type GenerateOptions, type GeneratedRow } from './model/generate.ts';
export { modelConfigSchema, type ModelConfig, type ModelConfigInput, type HostParams } from './model/config.ts';
export { byteTokenizer, type Tokenizer } from './chat/tokenizer.ts';
export { renderChat, renderGenerationPrompt, chatStopTokens } from './chat/chat-template.ts';
export { saveCheckpoint, loadCheckpoint } from './model/checkpoint.ts';
export {
  knownModels,
  loadModelCheckpoint,
  loadModelSource,
  modelCacheDir,
  pullModel,
  pulledModelPaths,
  resolveModelSource,
  ModelPullError,
} from './model/model-sources.ts';
export { loadGgufModel } from './model/gguf-model.ts';
export * from './policy/index.ts';
export * from './envs/index.ts';
export * from './rollout/index.ts';
export * from './agents/index.ts';
export * from './algorithms/index.ts';
export { runSft, renderExamples, sftConfigSchema } from './train/sft.ts';
export { runRl, rlConfigSchema, validate } from './train/rl.ts';
export { algorithmPresets, algorithmNames } from './train/algorithm-presets.ts';
export { warmStart, expertDemonstrations } from './train/warm-start.ts';
export { readChatJsonl, parseChatJsonl } from './train/chat-data.ts';
export * from './serve/index.ts';
export { policySolver, type PolicySolverOptions } from './train/self-play.ts';
export * from './trackers/index.ts';
