/**
 * Config fields every rollout-driven trainer (RL, online DPO) shares: how episodes are sampled,
 * what the policy sees, how often it is validated. Each trainer spreads `loopConfigShape` into its
 * own schema and overrides the defaults it needs.
 */
import { z } from 'zod';

export const loopConfigShape = {
  iterations: z.number().int().positive().default(10).describe('rollout → update iterations'),
  tasksPerIteration: z.number().int().positive().default(8).describe('tasks (seeds) per iteration'),
  groupSize: z.number().int().positive().default(8).describe('episodes per task (G)'),
  maxTurns: z.number().int().positive().default(10).describe('turns per episode at most'),
  maxNewTokens: z.number().int().positive().default(32).describe('tokens per reply at most'),
  systemPrompt: z
    .boolean()
    .default(false)
    .describe(
      'show the env instructions as a system message (a from-scratch model learns the format from the warm start instead)',
    ),
  temperature: z.number().positive().default(1).describe('rollout sampling temperature'),
  stopAtTag: z
    .boolean()
    .default(true)
    .describe('end a reply at its first </answer> or </tool_call> (text after it would only make the action invalid)'),
  maxGradNorm: z.number().nonnegative().default(1).describe('global gradient-norm clip'),
  validateEvery: z
    .number()
    .int()
    .nonnegative()
    .default(5)
    .describe('validate every N iterations (0 = only at the end)'),
  validationEpisodes: z.number().int().positive().default(64).describe('held-out validation seeds'),
  seed: z.number().int().nonnegative().default(0).describe('seed of tasks and sampling'),
} as const;

/** Validation runs every `validateEvery` iterations, after the last one, and when stopping early. */
export function isValidationIteration(
  config: { validateEvery: number; iterations: number },
  iteration: number,
  stopping: boolean,
): boolean {
  return (
    (config.validateEvery > 0 && iteration % config.validateEvery === 0) || iteration === config.iterations || stopping
  );
}

/** The stop strings a reply ends at (see `stopAtTag`). */
export function replyStopStrings(config: { stopAtTag: boolean }): string[] {
  return config.stopAtTag ? ['</answer>', '</tool_call>'] : [];
}

/** What a checkpoint records of the stop strings its rollouts ended at (serve-policy ends replies there too); nothing when there were none. */
export function stopStringsMetadata(config: { stopAtTag: boolean }): { stopStrings?: string[] } {
  const stopStrings = replyStopStrings(config);
  return stopStrings.length === 0 ? {} : { stopStrings };
}
