export { TinkerPolicy } from './tinker-policy.ts';
export type { TinkerTimes } from './tinker-policy.ts';
export { checkOptions } from './tinker-options.ts';
export type { TinkerPolicyOptions } from './tinker-options.ts';
export { rowSeed, toGeneration } from './tinker-sampling.ts';
export { TinkerClient, hostedTinkerUrl, defaultServerConfig, tinkerSdkVersion } from './tinker-client.ts';
export type { CallTimes, TinkerClientOptions, TinkerServerConfig } from './tinker-client.ts';
export { TinkerError, TinkerUnsupportedError } from './tinker-error.ts';
export type { TinkerFailure } from './tinker-error.ts';
export { FutureExpiredError, retrieveFuture } from './tinker-future.ts';
export type { TinkerRequestType } from './tinker-future.ts';
export { answerJson, idempotencyHeader, sendCall, sendRequest } from './tinker-http.ts';
export type { RetryOptions, TinkerAnswer, TinkerRequest } from './tinker-http.ts';
export {
  callRetryDelayMs,
  futurePollAction,
  isRetryableStatus,
  retryAfterSeconds,
  transportDelayMs,
} from './backoff.ts';
export { TinkerReference } from './tinker-reference.ts';
export { TinkerSampler } from './tinker-sampler.ts';
export { TinkerStorage } from './tinker-storage.ts';
export type { StorageSummary, StoredCheckpoint } from './tinker-storage.ts';
export { serverLossFunctions } from './server-loss.ts';
export type { ServerComputableLoss, ServerLoss, ServerLossFunction } from './server-loss.ts';
export { tinkerWires } from './tinker-training.ts';
export type { TinkerWire } from './tinker-training.ts';
export { gradientData, logprobsOfOutput, lossReductions, needsCurrentLogprobs, scoringData, toDatum } from './wire.ts';
export type { Datum, LossReduction, TensorData } from './wire.ts';
