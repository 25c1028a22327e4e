/**
 * Warm start: supervised fine-tuning on a scripted expert's episodes. The expert plays a
 * configurable fraction of random actions, so the imitated policy is imperfect and RL has room to
 * improve on it. Demonstrations are recorded by the rollout engine in expert mode, so their token
 * ids and loss masks are exactly what RL will later sample and train on: rendered with the
 * policy's tokenizer and cut to its context window. Any `TrainablePolicy` warm-starts (SFT through
 * the contract).
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import type { Env } from '../core/types.ts';
import type { Expert } from '../envs/expert.ts';
import { splitSeeds } from '../envs/split.ts';
import { byteTokenizer, type Tokenizer } from '../chat/tokenizer.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import { rollout } from '../rollout/index.ts';
import { runSft, type SftExample, type SftProgress } from './sft.ts';

export const warmStartConfigSchema = z.object({
  demonstrations: z
    .number()
    .int()
    .nonnegative()
    .default(256)
    .describe('expert episodes for the SFT warm start (0 = no warm start)'),
  randomActionRate: z.number().min(0).max(1).default(0.3).describe('fraction of random actions in the demonstrations'),
  sftSteps: z.number().int().nonnegative().default(150).describe('SFT steps of the warm start'),
  sftBatchSize: z.number().int().positive().default(16).describe('SFT conversations per step'),
  sftLearningRate: z.number().positive().default(3e-3).describe('SFT peak learning rate'),
});
export type WarmStartConfig = z.infer<typeof warmStartConfigSchema>;

export async function expertDemonstrations<Task>(options: {
  env: () => Env<Task>;
  expert: (seed: number) => Expert;
  episodes: number;
  maxTurns: number;
  contextWindow: number;
  /** The policy's tokenizer. Default the built-in byte tokenizer. */
  tokenizer?: Tokenizer;
  /** Demonstrations use train seeds from this index on (RL uses the ones from 0). */
  seedOffset?: number;
  /** Bounded history (see rollout): demonstrations are then the per-turn segments. */
  historyTurns?: number;
  /** The reply budget RL will use (the context-window check reserves it). */
  maxNewTokens?: number;
  /** Show env.instructions as a system message (as RL will). */
  instructions?: boolean;
}): Promise<{ examples: SftExample[]; successRate: number }> {
  const seeds = splitSeeds('train', options.episodes, options.seedOffset ?? 500_000_000);
  const { trajectories, stats } = await rollout({
    env: options.env,
    seeds,
    expert: ({ seed }) => options.expert(seed),
    maxTurns: options.maxTurns,
    tokenizer: options.tokenizer ?? byteTokenizer,
    contextWindow: options.contextWindow,
    historyTurns: options.historyTurns,
    maxNewTokens: options.maxNewTokens,
    instructions: options.instructions,
  });
  const examples = trajectories
    .flatMap((t): { tokens: number[]; lossMask: number[] }[] => t.segments ?? [t])
    .filter((t) => t.lossMask.some((m) => m === 1))
    .map((t) => ({ tokens: t.tokens, mask: t.lossMask }));
  return { examples, successRate: stats.successRate };
}

export async function warmStart<Task>(options: {
  policy: TrainablePolicy;
  env: () => Env<Task>;
  expert: (seed: number, randomActionRate: number) => Expert;
  config: WarmStartConfig;
  maxTurns: number;
  historyTurns?: number;
  maxNewTokens?: number;
  instructions?: boolean;
  onProgress?: (progress: SftProgress) => void;
  /** Gradient-norm clip of the SFT steps. Default 1 (a backend that cannot clip needs 0). */
  maxGradNorm?: number;
}): Promise<{ demonstrationSuccess: number; finalLoss: number }> {
  const { config } = options;
  const { examples, successRate } = await expertDemonstrations({
    env: options.env,
    expert: (seed) => options.expert(seed, config.randomActionRate),
    episodes: config.demonstrations,
    maxTurns: options.maxTurns,
    contextWindow: options.policy.contextWindow,
    tokenizer: options.policy.tokenizer,
    historyTurns: options.historyTurns,
    maxNewTokens: options.maxNewTokens,
    instructions: options.instructions,
  });
  if (examples.length === 0) {
    throw new InvalidArgumentError(
      `no expert demonstration fits the policy's ${options.policy.contextWindow}-token window; raise maxSeqLen or lower maxNewTokens/historyTurns`,
    );
  }
  const result = await runSft({
    policy: options.policy,
    train: examples,
    config: {
      steps: config.sftSteps,
      batchSize: config.sftBatchSize,
      learningRate: config.sftLearningRate,
      warmupSteps: 10,
      maxGradNorm: options.maxGradNorm ?? 1,
    },
    onProgress: options.onProgress,
  });
  return { demonstrationSuccess: successRate, finalLoss: result.finalLoss };
}
