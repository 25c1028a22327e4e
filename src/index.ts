/**
 * agentrl's public API, also importable by part: `agentrl/core`, `agentrl/chat`, `agentrl/model`,
 * `agentrl/engine`, `agentrl/policy`, `agentrl/envs`, `agentrl/agents`, `agentrl/rollout`,
 * `agentrl/algorithms`, `agentrl/train`, `agentrl/serve`, `agentrl/trackers`, and `agentrl/testing` (contract suites,
 * ScriptedPolicy, fixtures). Importing it loads no heavy dependency: the tensor library, onnxruntime,
 * Chromium's driver and the MCP SDK load when first used. (The CLI is `bin/agentrl.js`.)
 */
export * from './core/index.ts';
export * from './chat/index.ts';
export * from './model/index.ts';
export * from './engine/index.ts';
export { byteTokenizer, type Tokenizer } from './chat/tokenizer.ts';
export { renderChat, renderGenerationPrompt, chatStopTokens } from './chat/chat-template.ts';
export * from './policy/index.ts';
export * from './envs/index.ts';
export * from './rollout/index.ts';
export * from './agents/index.ts';
export * from './algorithms/index.ts';
export * from './train/index.ts';
export * from './serve/index.ts';
export * from './trackers/index.ts';
