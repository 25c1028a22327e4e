/**
 * Success rate of a policy on held-out seeds (one episode per seed; greedy by default).
 *
 *   const { successRate } = await evaluate({ policy, env: () => makeFrozenLake(), seeds: splitSeeds('test', 50) });
 */
import type { Env } from '../core/types.ts';
import type { Policy } from '../policy/types.ts';
import { rollout, type RolloutOptions, type RolloutResult } from './rollout.ts';
import type { RolloutStats } from './stats.ts';

export interface EvaluateOptions<Task = unknown>
  extends Pick<
    RolloutOptions<Task>,
    | 'tasks'
    | 'maxTurns'
    | 'maxNewTokens'
    | 'topP'
    | 'stopStrings'
    | 'concurrency'
    | 'samplingSeed'
    | 'contextWindow'
    | 'historyTurns'
    | 'instructions'
  > {
  policy: Policy;
  env: () => Env<Task>;
  seeds: readonly number[];
  /** Temperature 0. Default true. */
  greedy?: boolean;
  /** The sampling temperature when not greedy. Default 1. */
  temperature?: number;
}

export interface Evaluation extends RolloutStats {
  trajectories: RolloutResult['trajectories'];
}

export async function evaluate<Task = unknown>({
  greedy = true,
  temperature = 1,
  ...options
}: EvaluateOptions<Task>): Promise<Evaluation> {
  const { trajectories, stats } = await rollout({ ...options, groupSize: 1, temperature: greedy ? 0 : temperature });
  return { ...stats, trajectories };
}
