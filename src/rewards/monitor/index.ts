export * from './monitor-types.ts';
export * from './monitor-config.ts';
export * from './reward-monitor.ts';
export { answerOf, containsPhrase, normalizeText, toolOutputsOf } from './answer-text.ts';
