export { BuiltinPolicy } from './builtin-policy.ts';
export type { BuiltinPolicyOptions } from './builtin-policy.ts';
export { ScriptedPolicy, messagesFromTokens } from './scripted-policy.ts';
export type { ScriptContext, ScriptedPolicyOptions } from './scripted-policy.ts';
export { isTrainablePolicy } from './types.ts';
export type {
  GenerateBatchOptions,
  GenerateRequest,
  Generation,
  LossReport,
  OptimOptions,
  OptimReport,
  Policy,
  PolicyCapabilities,
  ReferencePolicy,
  SaveOptions,
  StepReport as PolicyStepReport,
  SamplingOptions,
  TokenBatch,
  TrainablePolicy,
} from './types.ts';
export { OpenAIPolicy, alignLogprobs, idsOfEntries } from './openai-policy.ts';
export type { ChatOptions, OpenAIPolicyOptions } from './openai-policy.ts';
export { PolicyRequestError, postJson } from './openai-http.ts';
export type { PostJsonOptions, RequestFailure, RetryOptions } from './openai-http.ts';
export { parseChatCompletion, toolSchema, toWireMessages } from './openai-wire.ts';
export type {
  ChatCompletion,
  FunctionSchema,
  MalformedToolCall,
  TokenLogprob,
  WireMessage,
  WireToolCall,
} from './openai-wire.ts';
