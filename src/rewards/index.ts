export * from './reward.ts';
export * from './rubric.ts';
