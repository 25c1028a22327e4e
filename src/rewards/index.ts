export * from './reward.ts';
export * from './rubric.ts';
export * from './episode-context.ts';
