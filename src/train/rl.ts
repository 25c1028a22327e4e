/**
 * The RL trainer: sample tasks → roll out G episodes per task with the current policy → token
 * rewards → advantages (per the algorithm preset) → minibatch epochs of the composite loss, with
 * KL to a frozen reference → metrics → periodic validation on held-out seeds → checkpoints.
 *
 * The built-in model samples and trains; old log-probs are the sampler's (they equal the scorer's
 * to 1e-5, tested in model.test.ts), reference log-probs come from a frozen copy of the starting
 * weights, values (PPO) from the model's value head. Old, current and reference log-probs are
 * all of the temperature-scaled distribution log_softmax(logits / T) at the rollout temperature
 * T (`temperature`), as verl and TRL score them; a `collect` scaffold must sample at T too.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { Rng, type RngState } from '../core/rng.ts';
import type { Env, Trajectory } from '../core/types.ts';
import { rlLoss, filterGroups, klEstimate } from '../algorithms/index.ts';
import type { TransformerModel } from '../model/model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { rollout, evaluate, rolloutStats } from '../rollout/index.ts';
import { splitSeed, splitSeeds } from '../envs/split.ts';
import { algorithmNameSchema, algorithmPresets, type AlgorithmPreset } from './algorithm-presets.ts';
import { computeAdvantages } from './advantages.ts';
import { learningRateAt } from './schedule.ts';
import { isValidationIteration, loopConfigShape, replyStopStrings } from './loop-config.ts';
import { trajectoryAdvantages } from './trajectory-advantages.ts';

export const rlConfigSchema = z.object({
  ...loopConfigShape,
  algo: algorithmNameSchema.default('grpo').describe('RL algorithm'),
  historyTurns: z.number().int().min(-1).default(-1).describe('previous turns the policy sees (-1 = the whole conversation)'),
  learningRate: z.number().positive().default(1e-4).describe('peak learning rate'),
  warmupIterations: z.number().int().nonnegative().default(0).describe('iterations of linear lr warm-up'),
  epochs: z.number().int().positive().default(1).describe('passes over each iteration’s data (PPO epochs)'),
  minibatchSize: z.number().int().positive().default(32).describe('trajectories per optimizer step'),
  gamma: z.number().min(0).max(1).default(1).describe('discount (GAE, REINFORCE++)'),
  lambda: z.number().min(0).max(1).default(1).describe('GAE λ'),
  klCoef: z.number().min(0).optional().describe('override the preset’s KL coefficient (loss or reward)'),
  entropyCoef: z.number().default(0).describe('entropy bonus weight'),
  clipRatioHigh: z.number().min(0).optional().describe('override ε_high (DAPO clip-higher)'),
  vfCoef: z.number().min(0).optional().describe('override the value-loss weight (PPO)'),
  detachValueHead: z.boolean().optional().describe('the value loss trains the value head only, not the shared trunk (PPO)'),
  turnWeighting: z
    .enum(['episode', 'turn'])
    .default('turn')
    .describe('bounded history: weight turns so each episode counts once (episode) or each turn once (turn)'),
});
export type RlConfig = z.infer<typeof rlConfigSchema>;
export type RlConfigInput = z.input<typeof rlConfigSchema>;

/** Means over an iteration's optimizer steps. */
export interface UpdateMetrics {
  loss: number;
  pgLoss: number;
  kl: number;
  /** KL(old ‖ current) of the policy loss, k3 (`approx_kl`): 0 at an iteration's first step. */
  approxKl: number;
  entropy: number;
  clipfrac: number;
  gradNorm: number;
}

export interface IterationMetrics extends UpdateMetrics {
  iteration: number;
  reward: number;
  success: number;
  episodes: number;
  /** Trajectories kept for the update (after dynamic sampling). */
  trained: number;
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
  /** After each iteration; `state` is what resuming after this iteration needs (with the model's weights and optimizer). */
  onIteration?: (metrics: IterationMetrics, state: RlResumeState) => void | Promise<void>;
  onRolloutProgress?: (done: number, total: number) => void;
  /** Every iteration's trajectories, before the update (for logging and run stores). */
  onTrajectories?: (trajectories: readonly Trajectory[], iteration: number) => void | Promise<void>;
  shouldStop?: () => boolean;
  /** Per-token advantages the update trains on, aligned with each kept trajectory's `tokens` (for run stores). */
  onAdvantages?: (trajectories: readonly Trajectory[], advantages: readonly Float64Array[], iteration: number) => void | Promise<void>;
  /** Continue after a finished iteration (the model must already hold that iteration's weights and optimizer state). */
  resume?: RlResumeState;
  /**
   * Collects an iteration's trajectories in place of the env rollout — an agent scaffold (ReAct,
   * tool calling, MemGPT) running the policy; trajectories of one task share a `groupId`.
   * Validation still plays `env`.
   */
  collect?: (context: { policy: BuiltinPolicy; seeds: readonly number[]; iteration: number; config: RlConfig }) => Promise<Trajectory[]>;
}

/** The trainer's own state after an iteration: the iteration number and the minibatch-shuffle RNG. */
export interface RlResumeState {
  iteration: number;
  rngState: RngState;
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
  if (config.vfCoef !== undefined) preset.loss.vfCoef = config.vfCoef;
  if (config.detachValueHead !== undefined) preset.loss.detachValueHead = config.detachValueHead;
  if (config.klCoef !== undefined) {
    if (preset.loss.useKlLoss) preset.loss.klLossCoef = config.klCoef;
    else if (preset.klInReward) preset.klInReward.coef = config.klCoef;
    else if (config.klCoef > 0) preset.loss = { ...preset.loss, useKlLoss: true, klLossCoef: config.klCoef, klLossType: 'k3' };
  }
  return preset;
}

/** The train-split task seeds of an iteration: fresh tasks every iteration, fixed by the run seed. */
export function iterationSeeds(runSeed: number, iteration: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => splitSeed('train', (runSeed * 1_000_003 + (iteration - 1) * count + i) % 1_000_000_000));
}

/** Validation success on held-out seeds, greedy. */
export async function validate<Task>(
  policy: BuiltinPolicy,
  env: () => Env<Task>,
  config: Pick<RlConfig, 'validationEpisodes' | 'maxTurns' | 'maxNewTokens' | 'historyTurns' | 'systemPrompt' | 'stopAtTag' | 'temperature'>,
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
    historyTurns: config.historyTurns < 0 ? undefined : config.historyTurns,
    instructions: config.systemPrompt,
  });
  return result.successRate;
}

/**
 * Held-out success two ways on the same seeds: `sampled` — the policy as it acts and is trained
 * (the rollout temperature, `samples` episodes per seed) — and `greedy` (temperature 0).
 */
export async function heldOutSuccess<Task>(
  policy: BuiltinPolicy,
  env: () => Env<Task>,
  config: Parameters<typeof validate>[2],
  { split = 'test', samples = 2, seed = 12_345 }: { split?: 'validation' | 'test'; samples?: number; seed?: number } = {},
): Promise<{ sampled: number; greedy: number }> {
  return {
    sampled: await validate(policy, env, config, split, { samples, seed }),
    greedy: await validate(policy, env, config, split),
  };
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
  const rng = new Rng(options.resume?.rngState ?? config.seed);
  const history: IterationMetrics[] = [];
  let validationSuccess: number | undefined;
  for (let iteration = (options.resume?.iteration ?? 0) + 1; iteration <= config.iterations; iteration++) {
    const started = performance.now();
    const seeds = iterationSeeds(config.seed, iteration, config.tasksPerIteration);
    const { trajectories: all, stats } = options.collect
      ? await collectWith(options.collect, { policy, seeds, iteration, config })
      : await rollout({
      policy,
      env: options.env,
      seeds,
      groupSize: config.groupSize,
      maxTurns: config.maxTurns,
      maxNewTokens: config.maxNewTokens,
      historyTurns: config.historyTurns < 0 ? undefined : config.historyTurns,
      instructions: config.systemPrompt,
      temperature: config.temperature,
      stopStrings: replyStopStrings(config),
      samplingSeed: config.seed * 7919 + iteration,
      onEpisode: options.onRolloutProgress ? (_t, p) => options.onRolloutProgress!(p.completed, p.total) : undefined,
    });
    await options.onTrajectories?.(all, iteration);
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
    const kept = trajectories;
    const onSamples = options.onAdvantages && ((samples: TrainingSample[]) => options.onAdvantages!(kept, trajectoryAdvantages(kept, samples), iteration));
    const update = trajectories.length > 0 ? await updatePolicy(model, reference, trajectories, preset, config, learningRate, rng, onSamples) : undefined;
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
      approxKl: update?.approxKl ?? 0,
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
    if (isValidationIteration(config, iteration, stopping)) {
      validationSuccess = await validate(policy, options.env, config);
      metrics.validationSuccess = validationSuccess;
    }
    history.push(metrics);
    await options.onIteration?.(metrics, { iteration, rngState: rng.state() });
    if (stopping) break;
  }
  return { history, finalValidationSuccess: validationSuccess };
}

async function collectWith(collect: NonNullable<RlRunOptions<unknown>['collect']>, context: Parameters<NonNullable<RlRunOptions<unknown>['collect']>>[0]) {
  const started = performance.now();
  const trajectories = await collect(context);
  return { trajectories, stats: rolloutStats(trajectories, (performance.now() - started) / 1000) };
}

interface UpdateReport extends UpdateMetrics {
  tokensPerSecond: number;
}

/** One sequence the update trains on, with everything the loss fixes. */
interface TrainingSample {
  tokens: number[];
  lossMask: number[];
  oldLogprobs: ArrayLike<number>;
  refLogprobs?: ArrayLike<number>;
  advantages: ArrayLike<number>;
  returns?: ArrayLike<number>;
  oldValues?: ArrayLike<number>;
}

async function updatePolicy(
  model: TransformerModel,
  reference: TransformerModel | undefined,
  trajectories: Trajectory[],
  preset: AlgorithmPreset,
  config: RlConfig,
  learningRate: number,
  rng: Rng,
  onSamples?: (samples: TrainingSample[]) => void | Promise<void>,
): Promise<UpdateReport> {
  const started = performance.now();
  const segmented = trajectories.every((t) => t.segments !== undefined);
  const samples = segmented
    ? await turnLevelSamples(model, reference, trajectories, preset, config)
    : await tokenLevelSamples(model, reference, trajectories, preset, config);
  await onSamples?.(samples);
  const totals = { loss: 0, pgLoss: 0, kl: 0, approxKl: 0, entropy: 0, clipfrac: 0, gradNorm: 0, steps: 0 };
  let tokens = 0;
  for (let epoch = 0; epoch < config.epochs; epoch++) {
    const order = rng.shuffle(samples.map((_, i) => i));
    for (let start = 0; start < order.length; start += config.minibatchSize) {
      const batch = order.slice(start, start + config.minibatchSize).map((i) => samples[i]!);
      const loss = rlLoss({
        oldLogprobs: batch.map((b) => b.oldLogprobs),
        refLogprobs: preset.loss.useKlLoss ? batch.map((b) => b.refLogprobs!) : undefined,
        advantages: batch.map((b) => b.advantages),
        lossMask: batch.map((b) => b.lossMask),
        returns: preset.valueHead ? batch.map((b) => b.returns!) : undefined,
        oldValues: preset.valueHead ? batch.map((b) => b.oldValues!) : undefined,
        config: preset.loss,
      });
      const report = await model.trainStep(batch.map((b) => b.tokens), loss, { learningRate, maxGradNorm: config.maxGradNorm, temperature: config.temperature });
      tokens += batch.reduce((n, b) => n + b.tokens.length, 0);
      totals.loss += report.loss;
      totals.pgLoss += report.metrics.pg_loss ?? 0;
      totals.kl += report.metrics.kl ?? report.metrics.ppo_kl ?? 0;
      totals.approxKl += report.metrics.approx_kl ?? 0;
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
    approxKl: totals.approxKl / n,
    entropy: totals.entropy / n,
    clipfrac: totals.clipfrac / n,
    gradNorm: totals.gradNorm / n,
    tokensPerSecond: tokens / ((performance.now() - started) / 1000),
  };
}

function usesReference(reference: TransformerModel | undefined, preset: AlgorithmPreset): reference is TransformerModel {
  return reference !== undefined && (preset.loss.useKlLoss === true || preset.klInReward !== null);
}

/** Whole-conversation trajectories: token-level advantages (rewards on each turn's last token). */
async function tokenLevelSamples(
  model: TransformerModel,
  reference: TransformerModel | undefined,
  trajectories: Trajectory[],
  preset: AlgorithmPreset,
  config: RlConfig,
): Promise<TrainingSample[]> {
  const sequences = trajectories.map((t) => t.tokens);
  const refLogprobs = usesReference(reference, preset) ? (await reference.score(sequences, { temperature: config.temperature })).logprobs : undefined;
  const values = preset.valueHead ? (await model.score(sequences)).values : undefined;
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
  return trajectories.map((t, i) => ({
    tokens: t.tokens,
    lossMask: t.lossMask,
    oldLogprobs: t.logprobs,
    refLogprobs: refLogprobs?.[i],
    advantages: advantages[i]!,
    returns: returns?.[i],
    oldValues: values?.[i],
  }));
}

/**
 * Bounded-history trajectories: turn-level credit assignment. Each episode becomes a sequence of
 * turns (reward r_k, value = the value head at the turn's first generated token, KL-in-reward
 * summed over the turn's tokens); the advantage estimator runs over turns (GRPO/RLOO: the
 * episode return; REINFORCE++ and GAE: discounted over turns, as RAGEN's turn-level GAE), and
 * each turn's advantage and return are broadcast over its segment's generated tokens.
 */
async function turnLevelSamples(
  model: TransformerModel,
  reference: TransformerModel | undefined,
  trajectories: Trajectory[],
  preset: AlgorithmPreset,
  config: RlConfig,
): Promise<TrainingSample[]> {
  const segments = trajectories.flatMap((t) => t.segments!);
  const sequences = segments.map((s) => s.tokens);
  const refLogprobs = usesReference(reference, preset) ? (await reference.score(sequences, { temperature: config.temperature })).logprobs : undefined;
  const values = preset.valueHead ? (await model.score(sequences)).values : undefined;
  const firstGenerated = (mask: readonly number[]): number => Math.max(0, mask.indexOf(1));
  let cursor = 0;
  const turnSamples = trajectories.map((trajectory) => {
    const count = trajectory.segments!.length;
    const rewards = new Float64Array(count);
    const turnValues = new Float64Array(count);
    for (let k = 0; k < count; k++) {
      const index = cursor + k;
      const segment = segments[index]!;
      let reward = trajectory.turns[segment.turn]!.reward;
      if (preset.klInReward !== null && refLogprobs) {
        let kl = 0;
        segment.lossMask.forEach((m, t) => {
          if (m === 1) kl += klEstimate(segment.logprobs[t]!, refLogprobs[index]![t]!, preset.klInReward!.estimator).value;
        });
        reward -= preset.klInReward.coef * kl;
      }
      rewards[k] = reward;
      if (values) turnValues[k] = values[index]![firstGenerated(segment.lossMask)]!;
    }
    cursor += count;
    return {
      lossMask: new Float64Array(count).fill(1),
      tokenRewards: rewards,
      groupId: trajectory.groupId,
      oldLogprobs: new Float64Array(count),
      values: values ? turnValues : undefined,
    };
  });
  const turnPreset: AlgorithmPreset = { ...preset, klInReward: null };
  const { advantages, returns } = computeAdvantages(turnSamples, turnPreset, { gamma: config.gamma, lambda: config.lambda });
  // Turn weighting (default, as verl/RAGEN): every turn is one sample with its episode's advantage.
  // Episode weighting scales an episode's advantages by K̄/K so each episode counts once; it
  // multiplies the advantage of a one-turn success by K̄ (≈5 on FrozenLake) and, measured, drives
  // the policy off its format within 3 iterations (docs/engineering-notes.md).
  const meanTurns = segments.length / Math.max(1, trajectories.length);
  const samples: TrainingSample[] = [];
  cursor = 0;
  trajectories.forEach((trajectory, e) => {
    const weight = config.turnWeighting === 'episode' ? meanTurns / Math.max(1, trajectory.segments!.length) : 1;
    trajectory.segments!.forEach((segment, k) => {
      const index = cursor + k;
      const broadcast = (value: number) => Float64Array.from(segment.lossMask, (m) => (m === 1 ? value : 0));
      samples.push({
        tokens: segment.tokens,
        lossMask: segment.lossMask,
        oldLogprobs: segment.logprobs,
        refLogprobs: refLogprobs?.[index],
        advantages: broadcast(weight * advantages[e]![k]!),
        returns: returns ? broadcast(returns[e]![k]!) : undefined,
        oldValues: values?.[index],
      });
    });
    cursor += trajectory.segments!.length;
  });
  return samples;
}
