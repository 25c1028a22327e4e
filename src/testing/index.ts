/**
 * `agentrl/testing`: what a test of an env, a policy or a trainer needs — the shared contract suites
 * (they declare node:test tests, so they live here and not in the main entry), the scripted policy
 * that replays exactly, and small seeded fixtures (the tiny ChatML tokenizer and a tiny model folder).
 *
 *   import { envContract, ScriptedPolicy } from 'agentrl/testing';
 *   envContract('my-env', () => makeMyEnv(), { … });
 */
export { envContract, type EnvContractOptions } from '../envs/contract.ts';
export {
  policyContract,
  type ContractContext,
  type PolicyContractOptions,
  type TrainableChecks,
} from '../policy/contract.ts';
export { trainableContract } from '../policy/contract-trainable.ts';
export { ScriptedPolicy, messagesFromTokens } from '../policy/scripted-policy.ts';
export type { ScriptContext, ScriptedPolicyOptions } from '../policy/scripted-policy.ts';
export { tinyChatmlFiles, tinyChatmlFormat } from '../chat/tiny-chatml.ts';
export { tinyModelConfig, tinyModelFolder } from '../cli/tiny-model-folder.ts';
