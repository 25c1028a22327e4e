export { JudgeError, judgeFailureReasons, type JudgeFailureReason, type JudgeFailureDetails } from './judge-error.ts';
export {
  judgeEndpointSchema,
  judgeSettingsSchema,
  type JudgeEndpoint,
  type JudgeSettings,
  type JudgeSettingsInput,
} from './judge-config.ts';
export { isJudge, takeJudgeMetrics, type JudgeMeter, type JudgeUsage } from './judge-usage.ts';
export { JudgeCache, judgeCacheKey } from './judge-cache.ts';
export { cutMiddle, transcriptJson, type TranscriptLimits } from './transcript.ts';
export { parseRetryAfter, type JudgeMessage, type JudgeReply } from './judge-http.ts';
export * from './pointwise-judge.ts';
export * from './group-judge.ts';
