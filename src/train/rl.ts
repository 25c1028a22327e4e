/**
 * The RL trainer: sample tasks → roll out G episodes per task with the current policy → token
 * rewards → advantages (per the algorithm preset) → minibatch epochs of the composite loss, with
 * KL to a frozen reference → metrics → periodic validation on held-out seeds → checkpoints.
 *
 * The trainer calls only the `TrainablePolicy` contract (policy/types.ts): `generateBatch` to
 * sample, `logprobs` to score, `forwardBackward` + `optimStep` (or the backend's fused
 * `trainStep`) to update, `values` for PPO's critic — so any backend trains, the built-in engine
 * (`BuiltinPolicy`) or a remote one (`TinkerPolicy`). An algorithm the backend cannot run (PPO
 * without a value head, an entropy bonus, gradient clipping) is refused before the first rollout.
 * Old log-probs are the sampler's (for the built-in model they equal the scorer's to 1e-5, tested
 * in model.test.ts), reference log-probs come from a frozen policy (`reference`: anything with
 * `logprobs`, e.g. a frozen copy of the starting weights), values (PPO) from the value head. Old, current and reference log-probs are
 * all of the temperature-scaled distribution log_softmax(logits / T) at the rollout temperature
 * T (`temperature`), as verl and TRL score them; a `collect` scaffold must sample at T too.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { Rng, type RngState } from '../core/rng.ts';
import type { Env, Trajectory } from '../core/types.ts';
import { offPolicyCorrectionField, rlLossConfigSchema } from '../algorithms/index.ts';
import type { ReferencePolicy, TrainablePolicy } from '../policy/types.ts';
import { rollout, rolloutStats } from '../rollout/index.ts';
import type { EpisodeContext, Rubric } from '../rewards/index.ts';
import { scoreBatch } from './rl-rewards.ts';
import { activeKl, algorithmNameSchema, algorithmPresets, type AlgorithmPreset } from './algorithm-presets.ts';
import { isValidationIteration, loopConfigShape, replyStopStrings } from './loop-config.ts';
import { collectIteration, type CollectIterationOptions } from './rl-collect.ts';
import { iterationMetrics, iterationWarnings } from './rl-iteration-report.ts';
import { updatePolicy } from './rl-update.ts';
import { requireCapabilities } from './policy-step.ts';
import { backendTimes, timesBetween } from './backend-times.ts';
import { historyTurnsSchema, rolloutHistoryTurns } from './history-turns.ts';
import { asyncConfigSchema, type AsyncResumeState, type AsyncRunHooks } from './rl-async-config.ts';
import { runAsyncRl } from './rl-async.ts';
import { type MonitoredTrajectory, watchIteration, type RewardMonitor } from './rl-monitor.ts';
import { advantagesHook, iterationLearningRate } from './rl-iteration-inputs.ts';
import { takeJudgeMetrics } from '../rewards/judges/judge-usage.ts';
import { type Curriculum, curriculumConfigShape, curriculumFor, type CurriculumState } from './curriculum.ts';

export { iterationSeeds } from './rl-collect.ts';
export { heldOutSuccess, validate } from './held-out.ts';
import { validate } from './held-out.ts';

export const rlConfigSchema = z.object({
  ...loopConfigShape,
  ...curriculumConfigShape,
  algo: algorithmNameSchema.default('grpo').describe('RL algorithm'),
  async: asyncConfigSchema,
  offPolicyCorrection: offPolicyCorrectionField,
  historyTurns: historyTurnsSchema
    .default('all')
    .describe("previous turns the policy sees: a count, or 'all' (the whole conversation)"),
  learningRate: z.number().positive().default(1e-4).describe('peak learning rate'),
  warmupIterations: z.number().int().nonnegative().default(0).describe('iterations of linear lr warm-up'),
  epochs: z.number().int().positive().default(1).describe('passes over each iteration’s data (PPO epochs)'),
  minibatchSize: z.number().int().positive().default(32).describe('trajectories per optimizer step'),
  gamma: z.number().min(0).max(1).default(1).describe('discount (GAE, REINFORCE++)'),
  lambda: z.number().min(0).max(1).default(1).describe('GAE λ'),
  klCoef: z
    .number()
    .min(0)
    .optional()
    .describe(
      'KL-to-reference coefficient (replaces the preset’s kl.coef; placement and estimator stay the preset’s); 0 = no KL',
    ),
  entropyCoef: z.number().default(0).describe('entropy bonus weight'),
  clipRatioHigh: z.number().min(0).optional().describe('override ε_high (DAPO clip-higher)'),
  clipRatioC: z
    .number()
    .gt(1)
    .nullable()
    .optional()
    .describe(
      'override the dual-clip bound c for negative advantages (verl clip_ratio_c: 3, DAPO recipe 10; null = off)',
    ),
  lossScaleFactor: z
    .number()
    .positive()
    .optional()
    .describe(
      'constant divisor of seq-mean-token-sum-norm (Dr. GRPO); default the generation budget: maxTurns × maxNewTokens, or maxNewTokens with bounded history',
    ),
  maxGenerationBatches: z
    .number()
    .int()
    .positive()
    .default(10)
    .describe(
      'dynamic sampling (DAPO): generation batches per iteration at most while refilling to tasksPerIteration varying groups (verl max_num_gen_batches)',
    ),
  vfCoef: z.number().min(0).optional().describe('override the value-loss weight (PPO)'),
  detachValueHead: z
    .boolean()
    .optional()
    .describe('the value loss trains the value head only, not the shared trunk (PPO)'),
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
  /**
   * KL to the reference policy where the preset places it: the loss term's estimate of KL(current ‖
   * reference) (placement 'loss'), or the mean per-token estimate of KL(sampler ‖ reference) taken
   * off the rewards (placement 'reward'); 0 when the preset has no KL.
   */
  klToReference: number;
  /** Policy drift, KL(old ‖ current) of the policy loss as k1, mean(old − logp) (verl `ppo_kl`): 0 at an iteration's first step. */
  ppoKl: number;
  /** Policy drift, KL(old ‖ current) of the policy loss as k3 (`approx_kl`, CleanRL): 0 at an iteration's first step. */
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
  /** Policy tokens (loss mask 1) of the kept trajectories. */
  trainedTokens: number;
  /** Generation batches of the iteration (more than 1 when dynamic sampling refilled the batch). */
  generationBatches: number;
  learningRate: number;
  invalidActionRate: number;
  /** Generated tokens per second of the rollout. */
  rolloutTokensPerSecond: number;
  /** Trajectory tokens per second of the update. */
  trainTokensPerSecond: number;
  seconds: number;
  /** Milliseconds of the iteration (rollout + update) per kind of backend call, when the policy keeps `times` (backend-times.ts; Tinker). */
  backendMs?: Record<string, number>;
  validationSuccess?: number;
  /**
   * Named scalar metrics under a `family/name` key, recorded as they are (run store, dashboard,
   * trackers): `reward/<component>`, `monitor/<signal>`, `offPolicy/*`, `async/*`, `curriculum/*`.
   * Add to it (`metrics.scalars = { ...metrics.scalars, ...yours }`); never replace another family's keys.
   */
  scalars?: Record<string, number>;
}

export interface RlRunOptions<Task, P extends TrainablePolicy = TrainablePolicy> extends AsyncRunHooks {
  /** The policy sampled and trained (e.g. `new BuiltinPolicy({ model })`). */
  policy: P;
  /** Frozen reference policy for KL (anything that scores); defaults to none (KL terms are then skipped). */
  reference?: ReferencePolicy;
  env: () => Env<Task>;
  config?: RlConfigInput;
  /** After each iteration; `state` is what resuming after this iteration needs (with the policy's `saveState`). */
  onIteration?: (metrics: IterationMetrics, state: RlResumeState) => void | Promise<void>;
  onRolloutProgress?: (done: number, total: number) => void;
  /** Every iteration's trajectories, before the update (for logging and run stores). */
  onTrajectories?: (trajectories: readonly Trajectory[], iteration: number) => void | Promise<void>;
  shouldStop?: () => boolean;
  /** Something in an iteration looks wrong but training goes on (default: printed with console.warn). */
  onWarning?: (warning: TrainingWarning) => void;
  /** Per-token advantages the update trains on, aligned with each kept trajectory's `tokens` (for run stores). */
  onAdvantages?: (
    trajectories: readonly Trajectory[],
    advantages: readonly Float64Array[],
    iteration: number,
  ) => void | Promise<void>;
  /** Continue after a finished iteration (the policy must already hold that iteration's weights and optimizer state). */
  resume?: RlResumeState;
  /** Watches each iteration for reward hacking (rl-monitor.ts); in mode 'stop' a fired signal ends the run after it. */
  monitor?: RewardMonitor;
  /**
   * Scores each generation batch's groups (`rubric.scoreGroup`) before dynamic sampling and
   * advantages: the total becomes the episode's reward, on its last generated token; the env's
   * per-turn rewards stay (scaled) only through the built-in `envReward` component
   * (src/rewards/trajectory-scoring.ts). A failed component leaves its group out of the update and
   * is counted (`rewardFailures`, `reward/<name>/failures`), never scored 0.
   */
  rubric?: Rubric<EpisodeContext<Task>>;
  /**
   * Collects an iteration's trajectories in place of the env rollout — an agent scaffold (ReAct,
   * tool calling, MemGPT) running the policy; trajectories of one task share a `groupId`.
   * Validation still plays `env`.
   */
  collect?: (context: {
    policy: P;
    seeds: readonly number[];
    iteration: number;
    config: RlConfig;
  }) => Promise<Trajectory[]>;
}

/** Kinds of `TrainingWarning`. */
export type TrainingWarningKind =
  | 'no-trained-tokens'
  | 'all-actions-invalid'
  | 'dynamic-sampling-short'
  | 'reward-failures'
  | 'reward-hacking';

/** A sign that an iteration trained on little or nothing, said out loud instead of logged as NaN. */
export interface TrainingWarning {
  iteration: number;
  kind: TrainingWarningKind;
  message: string;
}

/** The trainer's own state after an iteration: the iteration number and the minibatch-shuffle RNG. */
export interface RlResumeState {
  iteration: number;
  rngState: RngState;
  /** The asynchronous trainer's policy version and task stream (`async.maxStaleness` > 0). */
  async?: AsyncResumeState;
  /** The curriculum's per-task estimates (when `curriculumPool` > 0). */
  curriculum?: CurriculumState;
}

export interface RlResult {
  history: IterationMetrics[];
  finalValidationSuccess?: number;
  /** Why the run ended before its last iteration, when something other than `shouldStop` ended it (the reward-hacking monitor). */
  stopReason?: string;
}

export function effectivePreset(config: RlConfig): AlgorithmPreset {
  const base = algorithmPresets[config.algo];
  const preset: AlgorithmPreset = structuredClone(base);
  preset.loss = { ...preset.loss, entropyCoef: config.entropyCoef };
  if (config.clipRatioHigh !== undefined) preset.loss.clipRatioHigh = config.clipRatioHigh;
  if (config.clipRatioC !== undefined) preset.loss.clipRatioC = config.clipRatioC;
  if (rlLossConfigSchema.parse(preset.loss).lossAggMode === 'seq-mean-token-sum-norm') {
    // A constant, as verl (the max response length) and TRL (max completion length): the most
    // policy tokens one sample can hold — a whole episode, or one turn with bounded history.
    preset.loss.lossScaleFactor =
      config.lossScaleFactor ?? (config.historyTurns === 'all' ? config.maxTurns : 1) * config.maxNewTokens;
  }
  if (config.vfCoef !== undefined) preset.loss.vfCoef = config.vfCoef;
  if (config.detachValueHead !== undefined) preset.loss.detachValueHead = config.detachValueHead;
  if (config.klCoef !== undefined) preset.kl.coef = config.klCoef;
  return preset;
}

export async function runRl<Task, P extends TrainablePolicy>(options: RlRunOptions<Task, P>): Promise<RlResult> {
  const config = rlConfigSchema.parse(options.config ?? {});
  const preset = effectivePreset(config);
  const { policy, reference } = options;
  requireCapabilities(policy, {
    what: `algorithm ${config.algo}`,
    valueHead: preset.valueHead,
    entropyCoef: preset.loss.entropyCoef ?? 0,
    maxGradNorm: config.maxGradNorm,
  });
  const kl = activeKl(preset);
  if (kl !== null && reference === undefined) {
    throw new InvalidArgumentError(
      `algorithm ${config.algo} uses KL to a reference policy (in the ${kl.placement}): pass reference (a frozen copy of the start model) or set klCoef 0`,
    );
  }
  const warn =
    options.onWarning ?? ((warning: TrainingWarning) => console.warn(`agentrl: warning: ${warning.message}`));
  const rng = new Rng(options.resume?.rngState ?? config.seed);
  if (config.async.maxStaleness > 0) return runAsyncRl(options, { config, preset, rng, warn });
  const curriculum = curriculumFor(config, options.resume?.curriculum);
  const history: IterationMetrics[] = [];
  let validationSuccess: number | undefined;
  let stopReason: string | undefined;
  for (let iteration = (options.resume?.iteration ?? 0) + 1; iteration <= config.iterations; iteration++) {
    const context = { config, preset, rng, iteration, curriculum };
    const { metrics, keptGroups, generated } = await trainIteration(options, context);
    await options.onWeightsUpdated?.(iteration);
    const stopping = options.shouldStop?.() === true;
    if (isValidationIteration(config, iteration, stopping)) {
      validationSuccess = await validate(policy, options.env, config);
      metrics.validationSuccess = validationSuccess;
    }
    for (const warning of iterationWarnings(metrics, keptGroups, config, preset)) warn(warning);
    // Each judge's tokens and calls this iteration (read and reset: its per-iteration budget refills).
    if (options.rubric !== undefined) metrics.scalars = { ...metrics.scalars, ...takeJudgeMetrics(options.rubric) };
    stopReason = watchIteration(options.monitor, metrics, generated, warn, options.rubric);
    history.push(metrics);
    await options.onIteration?.(metrics, { iteration, rngState: rng.state(), curriculum: curriculum?.state() });
    if (stopping || stopReason !== undefined) break;
  }
  return { history, finalValidationSuccess: validationSuccess, ...(stopReason === undefined ? {} : { stopReason }) };
}

interface IterationContext {
  config: RlConfig;
  preset: AlgorithmPreset;
  /** The minibatch-shuffle RNG (part of the resume state). */
  rng: Rng;
  iteration: number;
  curriculum: Curriculum | undefined;
}

/** One iteration up to validation: collect (refilling under dynamic sampling), update, and the iteration's metrics. */
async function trainIteration<Task, P extends TrainablePolicy>(
  options: RlRunOptions<Task, P>,
  { config, preset, rng, iteration, curriculum }: IterationContext,
): Promise<{ metrics: IterationMetrics; keptGroups: number; generated: readonly MonitoredTrajectory[] }> {
  const { policy, reference } = options;
  const started = performance.now();
  const timesAtStart = backendTimes(policy);
  const referenceTimesAtStart = reference === undefined ? undefined : backendTimes(reference);
  const collected = await collectIteration({
    generate: generationBatch(options, config, iteration),
    runSeed: config.seed,
    iteration,
    tasksPerIteration: config.tasksPerIteration,
    dynamicSampling: preset.dropUniformGroups,
    maxGenerationBatches: config.maxGenerationBatches,
    curriculum,
  });
  await options.onTrajectories?.(collected.generated, iteration);
  const trajectories = collected.kept;
  const learningRate = iterationLearningRate(config, iteration);
  const onSamples = advantagesHook(options.onAdvantages, trajectories, iteration);
  const updateOptions = { policy, reference, trajectories, preset, config, iteration, learningRate, rng, onSamples };
  // A separate sampler is another engine: the off-policy correction's 'auto' turns on.
  const samplerMatchesTrainer = options.sampler === undefined ? undefined : false;
  const update = trajectories.length > 0 ? await updatePolicy({ ...updateOptions, samplerMatchesTrainer }) : undefined;
  const metrics = iterationMetrics({
    iteration,
    collected,
    update,
    learningRate,
    seconds: (performance.now() - started) / 1000,
  });
  if (curriculum !== undefined) metrics.scalars = { ...metrics.scalars, ...curriculum.metrics() };
  if (timesAtStart !== undefined) metrics.backendMs = timesBetween(timesAtStart, backendTimes(policy) ?? {});
  if (reference !== undefined && referenceTimesAtStart !== undefined) {
    // The KL reference is a backend of its own (Tinker: a second LoRA run): its calls count as `reference.<kind>`.
    for (const [kind, ms] of Object.entries(timesBetween(referenceTimesAtStart, backendTimes(reference) ?? {}))) {
      metrics.backendMs ??= {};
      metrics.backendMs[`reference.${kind}`] = ms;
    }
  }
  // The monitor reads each episode with its first observation (answer leakage through the prompt).
  const generated = collected.generated.map((t, i) => ({ ...t, prompt: collected.generatedPrompts[i] }));
  return { metrics, keptGroups: collected.keptGroups, generated };
}

/** Generates one batch of the iteration: the `collect` scaffold, or G env rollouts per seed. */
function generationBatch<Task, P extends TrainablePolicy>(
  options: RlRunOptions<Task, P>,
  config: RlConfig,
  iteration: number,
): CollectIterationOptions['generate'] {
  const { policy, onRolloutProgress } = options;
  return async (seeds, batch) => {
    const generationStarted = performance.now();
    const result = options.collect
      ? await collectWith(options.collect, { policy, seeds, iteration, config })
      : await rollout({
          policy: options.sampler ?? policy,
          env: options.env,
          seeds,
          groupSize: config.groupSize,
          maxTurns: config.maxTurns,
          maxNewTokens: config.maxNewTokens,
          historyTurns: rolloutHistoryTurns(config.historyTurns),
          instructions: config.systemPrompt,
          temperature: config.temperature,
          stopStrings: replyStopStrings(config),
          // Batch 0 keeps the seed it always had; refill batches get their own.
          samplingSeed: config.seed * 7919 + iteration + batch * 1_000_003,
          onEpisode: onRolloutProgress ? (_t, p) => onRolloutProgress(p.completed, p.total) : undefined,
        });
    const scored = options.rubric === undefined ? result : await scoreBatch(options.rubric, result);
    return { ...scored, episodes: result.episodes, seconds: (performance.now() - generationStarted) / 1000 };
  };
}

async function collectWith<P extends TrainablePolicy>(
  collect: NonNullable<RlRunOptions<unknown, P>['collect']>,
  context: Parameters<NonNullable<RlRunOptions<unknown, P>['collect']>>[0],
) {
  const started = performance.now();
  const trajectories = await collect(context);
  // A scaffold's episodes keep no starts (their first observation's text).
  return { trajectories, stats: rolloutStats(trajectories, (performance.now() - started) / 1000), episodes: undefined };
}
