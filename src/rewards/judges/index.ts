export * from './judge-error.ts';
export * from './judge-config.ts';
export * from './judge-usage.ts';
export * from './judge-cache.ts';
export * from './transcript.ts';
export { parseRetryAfter, type JudgeMessage, type JudgeReply } from './judge-http.ts';
export * from './pointwise-judge.ts';
export * from './group-judge.ts';
