/**
 * The RL trainer: sample tasks → roll out G episodes per task with the current policy → token
 * rewards → advantages (per the algorithm preset) → minibatch epochs of the composite loss, with
 * KL to a frozen reference → metrics → periodic validation on held-out seeds → checkpoints.
 *
 * The built-in model samples and trains; old log-probs are the sampler's (they equal the scorer's
 * to 1e-5, tested in model.test.ts), reference log-probs come from a frozen copy of the starting
 * weights, values (PPO) from the model's value head.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { Rng } from '../core/rng.ts';
import type { Env, Trajectory } from '../core/types.ts';
import { rlLoss, filterGroups } from '../algorithms/index.ts';
import type { TransformerModel } from '../model/model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { rollout, evaluate } from '../rollout/index.ts';
import { splitSeed, splitSeeds } from '../envs/split.ts';
import { algorithmNameSchema, algorithmPresets, type AlgorithmPreset } from './algorithm-presets.ts';
import { computeAdvantages } from './advantages.ts';
import { learningRateAt } from './schedule.ts';

export const rlConfigSchema = z.object({
  algo: algorithmNameSchema.default('grpo').describe('RL algorithm'),
  iterations: z.number().int().positive().default(20).describe('rollout → update iterations'),
  tasksPerIteration: z.number().int().positive().default(8).describe('tasks (seeds) per iteration'),
  groupSize: z.number().int().positive().default(8).describe('episodes per task (G)'),
  maxTurns: z.number().int().positive().default(10).describe('turns per episode at most'),
  maxNewTokens: z.number().int().positive().default(32).describe('tokens per reply at most'),
  temperature: z.number().positive().default(1).describe('rollout sampling temperature'),
  learningRate: z.number().positive().default(5e-4).describe('peak learning rate'),
  warmupIterations: z.number().int().nonnegative().default(0).describe('iterations of linear lr warm-up'),
  epochs: z.number().int().positive().default(1).describe('passes over each iteration’s data (PPO epochs)'),
  minibatchSize: z.number().int().positive().default(32).describe('trajectories per optimizer step'),
  maxGradNorm: z.number().nonnegative().default(1).describe('global gradient-norm clip'),
  gamma: z.number().min(0).max(1).default(1).describe('discount (GAE, REINFORCE++)'),
  lambda: z.number().min(0).max(1).default(1).describe('GAE λ'),
  klCoef: z.number().min(0).optional().describe('override the preset’s KL coefficient (loss or reward)'),
  entropyCoef: z.number().default(0).describe('entropy bonus weight'),
  clipRatioHigh: z.number().min(0).optional().describe('override ε_high (DAPO clip-higher)'),
  validateEvery: z.number().int().nonnegative().default(5).describe('validate every N iterations (0 = only at the end)'),
  validationEpisodes: z.number().int().positive().default(64).describe('held-out validation seeds'),
  seed: z.number().int().nonnegative().default(0).describe('seed of tasks and sampling'),
});
export type RlConfig = z.infer<typeof rlConfigSchema>;
export type RlConfigInput = z.input<typeof rlConfigSchema>;

export interface IterationMetrics {
  iteration: number;
  reward: number;
  success: number;
  episodes: number;
  /** Trajectories kept for the update (after dynamic sampling). */
  trained: number;
  loss: number;
  pgLoss: number;
  kl: number;
  entropy: number;
  clipfrac: number;
  gradNorm: number;
  learningRate: number;
  invalidActionRate: number;
  /** Generated tokens per second of the rollout. */
  rolloutTokensPerSecond: number;
  /** Trajectory tokens per second of the update. */
  trainTokensPerSecond: number;
  seconds: number;
  validationSuccess?: number;
}

export interface RlRunOptions<Task> {
  model: TransformerModel;
  /** Frozen reference policy for KL; defaults to none (KL terms are then skipped). */
  reference?: TransformerModel;
  env: () => Env<Task>;
  config?: RlConfigInput;
  onIteration?: (metrics: IterationMetrics) => void | Promise<void>;
  onRolloutProgress?: (done: number, total: number) => void;
  shouldStop?: () => boolean;
}

export interface RlResult {
  history: IterationMetrics[];
  finalValidationSuccess?: number;
}

export function effectivePreset(config: RlConfig): AlgorithmPreset {
  const base = algorithmPresets[config.algo];
  const preset: AlgorithmPreset = structuredClone(base);
  preset.loss = { ...preset.loss, entropyCoef: config.entropyCoef };
  if (config.clipRatioHigh !== undefined) preset.loss.clipRatioHigh = config.clipRatioHigh;
  if (config.klCoef !== undefined) {
    if (preset.loss.useKlLoss) preset.loss.klLossCoef = config.klCoef;
    else if (preset.klInReward) preset.klInReward.coef = config.klCoef;
    else if (config.klCoef > 0) preset.loss = { ...preset.loss, useKlLoss: true, klLossCoef: config.klCoef, klLossType: 'k3' };
  }
  return preset;
}

/** Validation success on held-out seeds, greedy. */
export async function validate<Task>(
  policy: BuiltinPolicy,
  env: () => Env<Task>,
  config: Pick<RlConfig, 'validationEpisodes' | 'maxTurns' | 'maxNewTokens'>,
  split: 'validation' | 'test' = 'validation',
): Promise<number> {
  const result = await evaluate({
    policy,
    env,
    seeds: splitSeeds(split, config.validationEpisodes),
    maxTurns: config.maxTurns,
    maxNewTokens: config.maxNewTokens,
  });
  return result.successRate;
}

export async function runRl<Task>(options: RlRunOptions<Task>): Promise<RlResult> {
  const config = rlConfigSchema.parse(options.config ?? {});
  const preset = effectivePreset(config);
  const { model, reference } = options;
  if (preset.valueHead && !model.config.valueHead) {
    throw new InvalidArgumentError(`algorithm ${config.algo} trains a critic: create the model with valueHead: true`);
  }
  const needsReference = preset.loss.useKlLoss === true || preset.klInReward !== null;
  if (needsReference && reference === undefined) {
    throw new InvalidArgumentError(`algorithm ${config.algo} uses KL to a reference policy: pass reference (a frozen copy of the start model) or set klCoef 0`);
  }
  const policy = new BuiltinPolicy({ model });
  const rng = new Rng(config.seed);
  const history: IterationMetrics[] = [];
  let validationSuccess: number | undefined;
  for (let iteration = 1; iteration <= config.iterations; iteration++) {
    const started = performance.now();
    const seeds = Array.from({ length: config.tasksPerIteration }, (_, i) =>
      splitSeed('train', (config.seed * 1_000_003 + (iteration - 1) * config.tasksPerIteration + i) % 1_000_000_000),
    );
    const { trajectories: all, stats } = await rollout({
      policy,
      env: options.env,
      seeds,
      groupSize: config.groupSize,
      maxTurns: config.maxTurns,
      maxNewTokens: config.maxNewTokens,
      temperature: config.temperature,
      samplingSeed: config.seed * 7919 + iteration,
      onEpisode: options.onRolloutProgress ? (_t, p) => options.onRolloutProgress!(p.completed, p.total) : undefined,
    });
    let trajectories = all.filter((t) => t.lossMask.some((m) => m === 1));
    if (preset.dropUniformGroups) {
      const kept = filterGroups({ groupIds: trajectories.map((t) => t.groupId), rewards: trajectories.map((t) => t.totalReward) }).kept;
      trajectories = kept.map((i) => trajectories[i]!);
    }
    const learningRate = learningRateAt(iteration, {
      peak: config.learningRate,
      totalSteps: config.iterations,
      warmupSteps: config.warmupIterations,
      minRatio: 1,
    });
    const update = trajectories.length > 0 ? await updatePolicy(model, reference, trajectories, preset, config, learningRate, rng) : undefined;
    const seconds = (performance.now() - started) / 1000;
    const metrics: IterationMetrics = {
      iteration,
      reward: stats.meanReward,
      success: stats.successRate,
      episodes: stats.episodes,
      trained: trajectories.length,
      loss: update?.loss ?? NaN,
      pgLoss: update?.pgLoss ?? NaN,
      kl: update?.kl ?? 0,
      entropy: update?.entropy ?? NaN,
      clipfrac: update?.clipfrac ?? 0,
      gradNorm: update?.gradNorm ?? 0,
      learningRate,
      invalidActionRate: stats.invalidActionRate,
      rolloutTokensPerSecond: stats.tokensPerSecond,
      trainTokensPerSecond: update?.tokensPerSecond ?? 0,
      seconds,
    };
    const stopping = options.shouldStop?.() === true;
    if ((config.validateEvery > 0 && iteration % config.validateEvery === 0) || iteration === config.iterations || stopping) {
      validationSuccess = await validate(policy, options.env, config);
      metrics.validationSuccess = validationSuccess;
    }
    history.push(metrics);
    await options.onIteration?.(metrics);
    if (stopping) break;
  }
  return { history, finalValidationSuccess: validationSuccess };
}

interface UpdateReport {
  loss: number;
  pgLoss: number;
  kl: number;
  entropy: number;
  clipfrac: number;
  gradNorm: number;
  tokensPerSecond: number;
}

/** Minibatches are padded to a multiple of this many rows so compiled shapes repeat. */
const ROW_BUCKET = 8;

async function updatePolicy(
  model: TransformerModel,
  reference: TransformerModel | undefined,
  trajectories: Trajectory[],
  preset: AlgorithmPreset,
  config: RlConfig,
  learningRate: number,
  rng: Rng,
): Promise<UpdateReport> {
  const started = performance.now();
  const sequences = trajectories.map((t) => t.tokens);
  const needsReference = reference !== undefined && (preset.loss.useKlLoss === true || preset.klInReward !== null);
  const refLogprobs = needsReference ? await scoreInBatches(reference!, sequences, config.minibatchSize, 'logprobs') : undefined;
  const values = preset.valueHead ? await scoreInBatches(model, sequences, config.minibatchSize, 'values') : undefined;
  const { advantages, returns } = computeAdvantages(
    trajectories.map((t, i) => ({
      lossMask: t.lossMask,
      tokenRewards: t.tokenRewards,
      groupId: t.groupId,
      oldLogprobs: t.logprobs,
      refLogprobs: refLogprobs?.[i],
      values: values?.[i],
    })),
    preset,
    { gamma: config.gamma, lambda: config.lambda },
  );
  const totals = { loss: 0, pgLoss: 0, kl: 0, entropy: 0, clipfrac: 0, gradNorm: 0, steps: 0 };
  let tokens = 0;
  for (let epoch = 0; epoch < config.epochs; epoch++) {
    const order = rng.shuffle(trajectories.map((_, i) => i));
    for (let start = 0; start < order.length; start += config.minibatchSize) {
      const indices = order.slice(start, start + config.minibatchSize);
      const rows = Math.ceil(indices.length / ROW_BUCKET) * ROW_BUCKET;
      // Filler rows: one masked token each, so the batch shape is a multiple of ROW_BUCKET.
      const pick = <T>(get: (i: number) => T, filler: T): T[] => [
        ...indices.map(get),
        ...Array.from({ length: rows - indices.length }, () => filler),
      ];
      const zero = [0];
      const loss = rlLoss({
        oldLogprobs: pick((i) => trajectories[i]!.logprobs, zero),
        refLogprobs: preset.loss.useKlLoss && refLogprobs ? pick((i) => refLogprobs[i]!, new Float32Array(1)) : undefined,
        advantages: pick((i) => advantages[i]!, new Float64Array(1)),
        lossMask: pick((i) => trajectories[i]!.lossMask, zero),
        returns: returns ? pick((i) => returns[i]!, new Float64Array(1)) : undefined,
        oldValues: values ? pick((i) => values[i]!, new Float32Array(1)) : undefined,
        config: preset.loss,
      });
      const batch = pick((i) => trajectories[i]!.tokens, zero);
      const report = await model.trainStep(batch, loss, { learningRate, maxGradNorm: config.maxGradNorm });
      tokens += batch.reduce((n, s) => n + s.length, 0);
      totals.loss += report.loss;
      totals.pgLoss += report.metrics.pg_loss ?? 0;
      totals.kl += report.metrics.kl ?? report.metrics.ppo_kl ?? 0;
      totals.entropy += report.metrics.entropy ?? NaN;
      totals.clipfrac += report.metrics.clipfrac ?? 0;
      totals.gradNorm += report.gradNorm;
      totals.steps++;
    }
  }
  const n = Math.max(1, totals.steps);
  return {
    loss: totals.loss / n,
    pgLoss: totals.pgLoss / n,
    kl: totals.kl / n,
    entropy: totals.entropy / n,
    clipfrac: totals.clipfrac / n,
    gradNorm: totals.gradNorm / n,
    tokensPerSecond: tokens / ((performance.now() - started) / 1000),
  };
}

async function scoreInBatches(
  model: TransformerModel,
  sequences: readonly number[][],
  batchSize: number,
  what: 'logprobs' | 'values',
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let start = 0; start < sequences.length; start += batchSize) {
    const scored = await model.score(sequences.slice(start, start + batchSize));
    out.push(...(what === 'logprobs' ? scored.logprobs : scored.values!));
  }
  return out;
}
