/**
 * Held-out success of a policy on an env's validation or test seeds (envs/split.ts): greedy, or
 * sampled at the rollout temperature — what the RL trainer validates with and the benches report.
 */
import type { Env } from '../core/types.ts';
import type { Policy } from '../policy/types.ts';
import { evaluate } from '../rollout/index.ts';
import { splitSeeds } from '../envs/split.ts';
import { replyStopStrings } from './loop-config.ts';
import { rolloutHistoryTurns } from './history-turns.ts';
import type { RlConfig } from './rl.ts';

/** Validation success on held-out seeds, greedy. */
export async function validate<Task>(
  policy: Policy,
  env: () => Env<Task>,
  config: Pick<
    RlConfig,
    'validationEpisodes' | 'maxTurns' | 'maxNewTokens' | 'historyTurns' | 'systemPrompt' | 'stopAtTag' | 'temperature'
  >,
  split: 'validation' | 'test' = 'validation',
  /** Sample at the rollout temperature, `samples` episodes per seed, instead of greedy decoding. */
  sampled?: { samples: number; seed: number },
): Promise<number> {
  const seeds = splitSeeds(split, config.validationEpisodes);
  const result = await evaluate({
    policy,
    env,
    seeds: sampled ? seeds.flatMap((s) => Array<number>(sampled.samples).fill(s)) : seeds,
    greedy: sampled === undefined,
    temperature: config.temperature,
    samplingSeed: sampled?.seed,
    stopStrings: replyStopStrings(config),
    maxTurns: config.maxTurns,
    maxNewTokens: config.maxNewTokens,
    historyTurns: rolloutHistoryTurns(config.historyTurns),
    instructions: config.systemPrompt,
  });
  return result.successRate;
}

/**
 * Held-out success two ways on the same seeds: `sampled` — the policy as it acts and is trained
 * (the rollout temperature, `samples` episodes per seed) — and `greedy` (temperature 0).
 */
export async function heldOutSuccess<Task>(
  policy: Policy,
  env: () => Env<Task>,
  config: Parameters<typeof validate>[2],
  {
    split = 'test',
    samples = 2,
    seed = 12_345,
  }: { split?: 'validation' | 'test'; samples?: number; seed?: number } = {},
): Promise<{ sampled: number; greedy: number }> {
  return {
    sampled: await validate(policy, env, config, split, { samples, seed }),
    greedy: await validate(policy, env, config, split),
  };
}
