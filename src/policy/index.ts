export { BuiltinPolicy } from './builtin-policy.ts';
export type { BuiltinPolicyOptions } from './builtin-policy.ts';
export { ScriptedPolicy, messagesFromTokens } from './scripted-policy.ts';
export type { ScriptContext, ScriptedPolicyOptions } from './scripted-policy.ts';
export { policyContract } from './contract.ts';
export type { PolicyContractOptions } from './contract.ts';
export { isTrainablePolicy } from './types.ts';
export type {
  GenerateRequest,
  Generation,
  LossReport,
  OptimOptions,
  OptimReport,
  Policy,
  SamplingOptions,
  TokenBatch,
  TrainablePolicy,
} from './types.ts';
