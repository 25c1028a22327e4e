/**
 * The asynchronous producer's generations: group n of the run's task stream is one task × G
 * episodes. Its task seed is the one the synchronous loop gives task n (iteration ⌊n/T⌋ + 1,
 * place n mod T: `iterationSeeds`), its sampling seed is fixed by n, so a resumed run generates
 * a pending group again exactly. Its groupId carries n: a task drawn twice makes two groups.
 */
import { at } from '../core/indexing.ts';
import type { Policy, TrainablePolicy } from '../policy/types.ts';
import { rollout, rolloutStats } from '../rollout/index.ts';
import { rolloutHistoryTurns } from './history-turns.ts';
import { replyStopStrings } from './loop-config.ts';
import type { GeneratedGroup } from './rl-async-producer.ts';
import { iterationSeeds } from './rl-collect.ts';
import { scoreBatch } from './rl-rewards.ts';
import type { RlConfig, RlRunOptions } from './rl.ts';

/** The task seed of group `index`: the synchronous loop's task of the same place in the stream. */
export function groupTaskSeed(runSeed: number, tasksPerIteration: number, index: number): number {
  const iteration = Math.floor(index / tasksPerIteration) + 1;
  return at(iterationSeeds(runSeed, iteration, tasksPerIteration), index % tasksPerIteration, 'iteration seeds');
}

/** Generates group `index` with `sampler` (the env rollout, or the `collect` scaffold with the trained policy). */
export function groupGenerator<Task, P extends TrainablePolicy>(
  options: RlRunOptions<Task, P>,
  config: RlConfig,
  sampler: Policy,
): (index: number) => Promise<GeneratedGroup> {
  return async (index) => {
    const seed = groupTaskSeed(config.seed, config.tasksPerIteration, index);
    const iteration = Math.floor(index / config.tasksPerIteration) + 1;
    const result = options.collect
      ? { trajectories: await options.collect({ policy: options.policy, seeds: [seed], iteration, config }) }
      : await rollout({
          policy: sampler,
          env: options.env,
          seeds: [seed],
          groupSize: config.groupSize,
          maxTurns: config.maxTurns,
          maxNewTokens: config.maxNewTokens,
          historyTurns: rolloutHistoryTurns(config.historyTurns),
          instructions: config.systemPrompt,
          temperature: config.temperature,
          stopStrings: replyStopStrings(config),
          samplingSeed: (config.seed * 7919 + 3_000_017 * (index + 1)) % 2_147_483_647,
        });
    // The rubric scores the group together (group rewards see the whole group), as rl.ts does per batch.
    const { trajectories } =
      options.rubric === undefined
        ? result
        : await scoreBatch(options.rubric, { ...result, stats: rolloutStats(result.trajectories, 0) });
    for (const trajectory of trajectories) trajectory.groupId = `${trajectory.groupId}#${index}`;
    // The rollout's episode starts (a collect scaffold gives none): what the monitor reads as each prompt.
    const starts = 'episodes' in result ? result.episodes : undefined;
    return { trajectories, prompts: trajectories.map((_, i) => starts?.[i]?.prompt) };
  };
}
