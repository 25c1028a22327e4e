/**
 * Online DPO from rollouts (Rafailov et al. 2023, arXiv:2305.18290): sample G episodes per task
 * with the current policy, pair a successful episode with a failed one of the same task (chosen =
 * higher return), and minimise the DPO (sigmoid) or IPO loss of the pair's whole trajectories
 * against a frozen reference. Trajectories are whole conversations (the pair compares Σ log π over
 * every generated token of the episode), so they must fit the model's window. Trains any
 * `TrainablePolicy`; the reference is anything that scores (`logprobs`).
 */
import { z } from 'zod';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import type { Env, Trajectory } from '../core/types.ts';
import { dpoLoss, dpoLossTypes, type PreferencePair } from '../algorithms/index.ts';
import type { ReferencePolicy, TrainablePolicy } from '../policy/types.ts';
import { rollout } from '../rollout/index.ts';
import { iterationSeeds, validate } from './rl.ts';
import { isValidationIteration, loopConfigShape, replyStopStrings } from './loop-config.ts';
import { policyStep, requireCapabilities } from './policy-step.ts';

export const dpoConfigSchema = z.object({
  ...loopConfigShape,
  tasksPerIteration: loopConfigShape.tasksPerIteration
    .removeDefault()
    .default(16)
    .describe('tasks (seeds) per iteration'),
  groupSize: z.number().int().min(2).default(4).describe('episodes per task, paired within the task'),
  beta: z.number().positive().default(0.1).describe('DPO β (TRL default 0.1)'),
  lossType: z.enum(dpoLossTypes).default('sigmoid').describe('DPO loss'),
  learningRate: z.number().positive().default(1e-4).describe('learning rate'),
  pairsPerStep: z.number().int().positive().default(8).describe('preference pairs per optimizer step'),
});
export type DpoConfig = z.infer<typeof dpoConfigSchema>;
export type DpoConfigInput = z.input<typeof dpoConfigSchema>;

export interface DpoIterationMetrics {
  iteration: number;
  success: number;
  pairs: number;
  loss: number;
  rewardAccuracy: number;
  margin: number;
  seconds: number;
  validationSuccess?: number;
}

/**
 * Pairs within each group: successes (best return first) with failures (worst return first), as
 * many pairs as the smaller side has; a group whose episodes all succeed or all fail gives none.
 */
export function preferencePairs(trajectories: readonly Trajectory[]): PreferencePair[] {
  const groups = new Map<string, number[]>();
  trajectories.forEach((t, i) => {
    if (!t.lossMask.some((m) => m === 1)) return;
    const members = groups.get(t.groupId) ?? [];
    members.push(i);
    groups.set(t.groupId, members);
  });
  const pairs: PreferencePair[] = [];
  for (const members of groups.values()) {
    const succeeded = (i: number) => at(trajectories, i, 'trajectories').success;
    const rewardOf = (i: number) => at(trajectories, i, 'trajectories').totalReward;
    const wins = members.filter(succeeded).sort((a, b) => rewardOf(b) - rewardOf(a));
    const losses = members.filter((i) => !succeeded(i)).sort((a, b) => rewardOf(a) - rewardOf(b));
    wins.forEach((chosen, k) => {
      const rejected = losses[k];
      if (rejected !== undefined) pairs.push({ chosen, rejected });
    });
  }
  return pairs;
}

export async function runDpo<Task>(options: {
  policy: TrainablePolicy;
  reference: ReferencePolicy;
  env: () => Env<Task>;
  config?: DpoConfigInput;
  onIteration?: (metrics: DpoIterationMetrics) => void | Promise<void>;
  shouldStop?: () => boolean;
}): Promise<{ history: DpoIterationMetrics[]; finalValidationSuccess?: number }> {
  const config = dpoConfigSchema.parse(options.config ?? {});
  const { policy, reference } = options;
  requireCapabilities(policy, { what: `DPO (${config.lossType})`, maxGradNorm: config.maxGradNorm });
  const rng = new Rng(config.seed);
  const history: DpoIterationMetrics[] = [];
  let validationSuccess: number | undefined;
  const validationConfig = { ...config, historyTurns: 'all' as const };
  for (let iteration = 1; iteration <= config.iterations; iteration++) {
    const started = performance.now();
    const seeds = iterationSeeds(config.seed, iteration, config.tasksPerIteration);
    const { trajectories, stats } = await rollout({
      policy,
      env: options.env,
      seeds,
      groupSize: config.groupSize,
      maxTurns: config.maxTurns,
      maxNewTokens: config.maxNewTokens,
      temperature: config.temperature,
      instructions: config.systemPrompt,
      stopStrings: replyStopStrings(config),
      samplingSeed: config.seed * 7919 + iteration,
    });
    const pairs = rng.shuffle(preferencePairs(trajectories));
    const totals = { loss: 0, accuracy: 0, margin: 0, steps: 0 };
    for (let start = 0; start < pairs.length; start += config.pairsPerStep) {
      const batchPairs = pairs.slice(start, start + config.pairsPerStep);
      // Sequences: each pair's chosen then rejected trajectory; pairs index into that list.
      const members = batchPairs.flatMap((p) => [
        at(trajectories, p.chosen, 'trajectories'),
        at(trajectories, p.rejected, 'trajectories'),
      ]);
      const sequences = members.map((t) => t.tokens);
      const refLogprobs = await reference.logprobs({ sequences });
      const loss = dpoLoss({
        refLogprobs,
        lossMask: members.map((t) => t.lossMask),
        pairs: batchPairs.map((_, k) => ({ chosen: 2 * k, rejected: 2 * k + 1 })),
        beta: config.beta,
        lossType: config.lossType,
      });
      const report = await policyStep(policy, { sequences }, loss, {
        learningRate: config.learningRate,
        maxGradNorm: config.maxGradNorm,
      });
      totals.loss += report.loss;
      totals.accuracy += report.metrics.reward_accuracy ?? 0;
      totals.margin += report.metrics.reward_margin ?? 0;
      totals.steps++;
    }
    const n = Math.max(1, totals.steps);
    const metrics: DpoIterationMetrics = {
      iteration,
      success: stats.successRate,
      pairs: pairs.length,
      loss: totals.steps > 0 ? totals.loss / n : NaN,
      rewardAccuracy: totals.accuracy / n,
      margin: totals.margin / n,
      seconds: (performance.now() - started) / 1000,
    };
    const stopping = options.shouldStop?.() === true;
    if (isValidationIteration(config, iteration, stopping)) {
      validationSuccess = await validate(policy, options.env, validationConfig);
      metrics.validationSuccess = validationSuccess;
    }
    history.push(metrics);
    await options.onIteration?.(metrics);
    if (stopping) break;
  }
  return { history, finalValidationSuccess: validationSuccess };
}
