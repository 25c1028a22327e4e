/** Serving: the OpenEnv environment server and client, remote envs, the OpenAI-compatible policy server, HF export. */
export { startEnvServer, type EnvServer, type EnvServerOptions, type WsErrorCode } from './openenv/env-server.ts';
export {
  OpenEnvClient,
  OpenEnvError,
  OpenEnvSession,
  type OpenEnvClientOptions,
  type WireActionInput,
} from './openenv/client.ts';
export { RemoteEnv, RemoteEnvPool, PoolFullError, type RemoteEnvInfo } from './openenv/remote-env.ts';
export { actionSchema, observationSchema, stateSchema, wireSchemas, type WireResult } from './openenv/wire.ts';
export {
  loadServedPolicy,
  startPolicyServer,
  type PolicyServer,
  type PolicyServerOptions,
  type ServedSource,
} from './openai/policy-server.ts';
export { policyGenerator } from './openai/policy-generator.ts';
export { GenerationAbandonedError, ServedPolicyError } from './openai/served-policy-errors.ts';
export { GenerationBatcher, type TokenGenerator } from './openai/batcher.ts';
export { toolsPrompt } from './openai/tool-format.ts';
export { exportHuggingFace, type ExportHfOptions, type ExportHfResult } from './export-hf.ts';
export {
  gatewayCollect,
  GatewayError,
  sessionHeader,
  startGateway,
  type AgentRun,
  type Gateway,
  type GatewayCollectOptions,
  type GatewayMetrics,
  type GatewayOptions,
  type RewardContext,
} from './gateway/index.ts';
