export { rollout } from './rollout.ts';
export type { RolloutOptions, RolloutResult } from './rollout.ts';
export type { EpisodeStart } from './episode.ts';
export { evaluate } from './evaluate.ts';
export type { EvaluateOptions, Evaluation } from './evaluate.ts';
export { rolloutStats } from './stats.ts';
export type { RolloutStats } from './stats.ts';
export { PromptTooLongError } from './errors.ts';
export type { PromptFit } from './errors.ts';
