export * from './reward.ts';
export * from './rubric.ts';
export * from './episode-context.ts';
export * from './builtin-rewards.ts';
export * from './trajectory-scoring.ts';
export * from './component-metrics.ts';
export * from './reward-spec.ts';
export * from './judges/index.ts';
