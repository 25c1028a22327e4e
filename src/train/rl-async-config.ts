/**
 * The asynchronous RL trainer's config key (`async` in rlConfigSchema) and its run options: a
 * separate sampler and the hook that hands it new weights. `maxStaleness` 0 (the default) is the
 * synchronous loop of rl.ts, bit for bit; k > 0 runs rl-async.ts, where a producer keeps sampling
 * groups while the trainer updates and a trajectory is trained at most k policy versions old
 * (AReaL's `max_head_offpolicyness`, arXiv:2505.24298 §5.1; prime-rl's `max_async_level`).
 */
import { z } from 'zod';
import type { Policy } from '../policy/types.ts';

const asyncObjectSchema = z.object({
  maxStaleness: z
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe(
      'policy versions (weight updates) a trajectory may lag the trainer when trained; 0 = the synchronous loop, bit for bit',
    ),
  staleTrajectories: z
    .enum(['drop', 'rescore'])
    .default('drop')
    .describe(
      "a group older than maxStaleness: 'drop' it (counted in async/dropped), or 'rescore' its behaviour log-probs under the trainer's current weights and train it as that version's (counted in async/rescored)",
    ),
  groupsInFlight: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('groups (one task × groupSize episodes) the producer generates at once; default tasksPerIteration'),
});

/** `--async 2` (a number: maxStaleness) or `--async '{"maxStaleness":2,…}'` (JSON) from the command line. */
function asyncShorthand(value: unknown): unknown {
  if (typeof value === 'number') return { maxStaleness: value };
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (/^\d+$/.test(text)) return { maxStaleness: Number(text) };
  try {
    return JSON.parse(text);
  } catch {
    return value; // the object schema then says what it expected
  }
}

export const asyncConfigSchema = z
  .preprocess(asyncShorthand, asyncObjectSchema)
  .default({ maxStaleness: 0, staleTrajectories: 'drop' })
  .describe(
    'asynchronous RL: rollouts keep going while the trainer updates, with bounded staleness: maxStaleness (a number), or { maxStaleness, staleTrajectories, groupsInFlight }',
  );
export type AsyncConfig = z.infer<typeof asyncConfigSchema>;

/**
 * A separate sampler and its weight hook. With `maxStaleness` 0 the synchronous loop uses them too:
 * it samples with `sampler` and calls `onWeightsUpdated` after each iteration's update.
 */
export interface AsyncRunHooks {
  /**
   * Samples the rollouts in place of `policy` (an OpenAI-compatible server, a Tinker sampling
   * client): it then runs concurrently with the update, and `onWeightsUpdated` must hand it the
   * new weights. Default: `policy` itself, whose generations and updates then take turns (the
   * in-process engine shares its weights, so the sampler sees each update at once).
   */
  sampler?: Policy;
  /**
   * After each update, before the new version counts: push the weights to the sampler (save and
   * reload a LoRA on vLLM, create a new Tinker sampling client). Groups started afterwards are
   * tagged `version`.
   */
  onWeightsUpdated?: (version: number) => void | Promise<void>;
}

/**
 * What resuming an asynchronous run restores besides the iteration: the policy version and the
 * producer's place in the task stream. The queue itself is not persisted: the groups started and
 * not yet trained (`pendingGroups`) are generated again, same tasks and sampling seeds, by the
 * restored weights.
 */
export interface AsyncResumeState {
  policyVersion: number;
  /** Index of the next group of the task stream the producer starts. */
  nextGroup: number;
  /** Groups started but not trained when the state was taken (in flight or queued). */
  pendingGroups: number[];
}
