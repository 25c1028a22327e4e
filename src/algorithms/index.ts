export { gae, type GaeOptions } from './advantages/gae.ts';
export { grpoAdvantages, type GroupAdvantageOptions, type GroupAdvantageResult } from './advantages/grpo.ts';
export { rlooAdvantages } from './advantages/rloo.ts';
export { reinforcePlusPlusAdvantages } from './advantages/reinforce-plus-plus.ts';
export {
  advantageEstimators,
  turnLevelAdvantages,
  turnWeightings,
  type AdvantageEstimator,
  type CreditEpisode,
  type CreditTurn,
  type TurnKlTerms,
  type TurnLevelOptions,
  type TurnLevelResult,
  type TurnWeighting,
} from './advantages/turn-level.ts';
export { whiten } from './advantages/whiten.ts';
export {
  aggregate,
  aggregationWeights,
  lossAggModes,
  type AggregationOptions,
  type LossAggMode,
} from './aggregation.ts';
export { filterGroups, type GroupFilterResult } from './dynamic-sampling.ts';
export { klEstimate, klEstimators, klInReward, klPenaltyLoss, type KlEstimator } from './kl.ts';
export { dpoLossTypes, dpoPairLoss, type DpoLossType, type DpoOptions, type PreferencePair } from './losses/dpo.ts';
export { cispoLoss } from './losses/cispo.ts';
export { entropyBonus } from './losses/entropy.ts';
export { gspoLoss } from './losses/gspo.ts';
export { ppoClipLoss, type PolicyLossOptions, type PolicyLossResult } from './losses/ppo-clip.ts';
export { negativeLogLikelihood, nllGradient } from './losses/sft.ts';
export { valueLoss } from './losses/value.ts';
export {
  correctionActive,
  offPolicyCorrectionField,
  offPolicyCorrectionModes,
  offPolicyCorrectionSchema,
  offPolicyWeights,
  weightPolicyLoss,
  type CorrectionMethod,
  type OffPolicyCorrectionConfig,
  type OffPolicyCorrectionInput,
  type OffPolicyCorrectionMode,
  type OffPolicyMetrics,
  type OffPolicyWeights,
} from './off-policy-correction.ts';
export {
  dpoLoss,
  policyLossNames,
  rlLoss,
  rlLossConfigSchema,
  rlLossTerms,
  sftLoss,
  type RlBatch,
  type RlCurrent,
  type RlLossConfig,
  type RlLossConfigInput,
  type RlLossTerms,
} from './rl-loss.ts';
export type { Sequences } from './sequences.ts';
