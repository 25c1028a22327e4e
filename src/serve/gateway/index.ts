/** The training gateway: train an agent written with any OpenAI client by pointing its base URL here. */
export { startGateway, type Gateway, type GatewayOptions } from './gateway.ts';
export {
  gatewayCollect,
  type AgentRun,
  type CollectContext,
  type DroppedRun,
  type GatewayCollectOptions,
  type RewardContext,
  type RewardValue,
} from './gateway-collect.ts';
export { GatewayError } from './errors.ts';
export { postedReward, sessionEpisode, type GatewayEpisode, type GatewayRubric } from './gateway-rubric.ts';
export { rewardRangeSchema, type RewardRange, type RewardRangeInput } from './posted-reward.ts';
export { sessionHeader, sessionIdOf, sessionModelPrefix } from './session-id.ts';
export { sessionSecretHeader } from './session-secret.ts';
export type { DropReason, FinishedSession, GatewayMetrics, Session, SessionSettings } from './session-store.ts';
export {
  finalMessages,
  joinCalls,
  sessionTrajectory,
  type JoinedCalls,
  type RecordedCall,
} from './session-trajectory.ts';
