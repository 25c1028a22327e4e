/**
 * Asynchronous RL (`async: { maxStaleness: k }`, k > 0): a producer keeps generating whole groups
 * into a bounded queue (rl-async-producer.ts) while this loop, the consumer, trains on them — the
 * decoupling of AReaL (arXiv:2505.24298), prime-rl, slime, verl's fully-async mode. A policy
 * version is the number of updates the weights have taken, so at iteration i the trainer holds
 * version i − 1 and a trajectory sampled at version v is i − 1 − v stale; it is trained only when
 * that is ≤ k (rl-async-take.ts drops or re-scores older groups). After each update
 * `onWeightsUpdated(i)` hands the sampler the new weights, and only then do new groups carry
 * version i. The off-policy correction (rl-update.ts, `offPolicyCorrection`) reads each
 * trajectory's `policyVersion`.
 *
 * Same metrics as the synchronous loop, plus `async/*` scalars: staleness mean / max of the
 * trained trajectories, dropped and re-scored trajectories, queue depth (at the update, and the
 * most in the iteration), producer and trainer idle seconds. The reward-hacking monitor watches each
 * iteration as in the synchronous loop. `backendMs` is not reported: the
 * sampler's and the trainer's calls overlap in time. Resume: see AsyncResumeState.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import type { Rng } from '../core/rng.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import type { AlgorithmPreset } from './algorithm-presets.ts';
import {
  validate,
  type IterationMetrics,
  type RlConfig,
  type RlResult,
  type RlRunOptions,
  type TrainingWarning,
} from './rl.ts';
import { isValidationIteration } from './loop-config.ts';
import { groupGenerator } from './rl-async-generate.ts';
import { AsyncLock } from './rl-async-lock.ts';
import { GroupProducer } from './rl-async-producer.ts';
import { takeIteration, type TakenIteration } from './rl-async-take.ts';
import { iterationMetrics, iterationWarnings } from './rl-iteration-report.ts';
import { updatePolicy } from './rl-update.ts';
import { type MonitoredTrajectory, watchIteration } from './rl-monitor.ts';
import { advantagesHook, iterationLearningRate } from './rl-iteration-inputs.ts';
import { takeJudgeMetrics } from '../rewards/judges/judge-usage.ts';

export interface AsyncLoopContext {
  config: RlConfig;
  preset: AlgorithmPreset;
  rng: Rng;
  warn: (warning: TrainingWarning) => void;
}

export async function runAsyncRl<Task, P extends TrainablePolicy>(
  options: RlRunOptions<Task, P>,
  { config, preset, rng, warn }: AsyncLoopContext,
): Promise<RlResult> {
  const { policy } = options;
  const { maxStaleness } = config.async;
  const first = (options.resume?.iteration ?? 0) + 1;
  const resumed = options.resume?.async;
  if (config.curriculumPool > 0) {
    throw new InvalidArgumentError(
      `async.maxStaleness ${maxStaleness} with curriculumPool ${config.curriculumPool}: the curriculum draws each iteration's tasks from what the previous one learned, which the asynchronous producer runs ahead of; use one or the other`,
    );
  }
  if (resumed !== undefined && resumed.policyVersion !== first - 1) {
    throw new InvalidArgumentError(
      `resume state: policy version ${resumed.policyVersion} after iteration ${first - 1}; a version is one update per iteration, so they must be equal`,
    );
  }
  // The sampler is the trained policy unless one is given: generations and updates then take turns.
  const exclusive = options.sampler === undefined ? new AsyncLock() : undefined;
  const producer = new GroupProducer({
    generate: groupGenerator(options, config, options.sampler ?? policy),
    tasksPerIteration: config.tasksPerIteration,
    maxStaleness,
    groupsInFlight: config.async.groupsInFlight ?? config.tasksPerIteration,
    version: first - 1,
    nextGroup: resumed?.nextGroup ?? (first - 1) * config.tasksPerIteration,
    pendingGroups: resumed?.pendingGroups,
    exclusive,
  });
  const history: IterationMetrics[] = [];
  let validationSuccess: number | undefined;
  let stopReason: string | undefined;
  const context = { config, preset, rng, warn };
  producer.start();
  try {
    for (let iteration = first; iteration <= config.iterations; iteration++) {
      const { metrics, generated } = await asyncIteration(options, context, producer, exclusive, iteration);
      const stopping = options.shouldStop?.() === true;
      if (isValidationIteration(config, iteration, stopping)) {
        const held = () => validate(policy, options.env, config);
        validationSuccess = await (exclusive === undefined ? held() : exclusive.with(held));
        metrics.validationSuccess = validationSuccess;
      }
      // Each judge's tokens and calls this iteration (read and reset: its per-iteration budget refills).
      if (options.rubric !== undefined) metrics.scalars = { ...metrics.scalars, ...takeJudgeMetrics(options.rubric) };
      stopReason = watchIteration(options.monitor, metrics, generated, warn, options.rubric);
      history.push(metrics);
      const async = { policyVersion: iteration, nextGroup: producer.next(), pendingGroups: producer.pending() };
      await options.onIteration?.(metrics, { iteration, rngState: rng.state(), async });
      if (stopping || stopReason !== undefined) break;
    }
  } finally {
    await producer.stop();
  }
  return { history, finalValidationSuccess: validationSuccess, ...(stopReason === undefined ? {} : { stopReason }) };
}

/** One iteration: take the groups, update, publish the new version, report. */
async function asyncIteration<Task, P extends TrainablePolicy>(
  options: RlRunOptions<Task, P>,
  { config, preset, rng, warn }: AsyncLoopContext,
  producer: GroupProducer,
  exclusive: AsyncLock | undefined,
  iteration: number,
): Promise<{ metrics: IterationMetrics; generated: readonly MonitoredTrajectory[] }> {
  const { policy, reference } = options;
  const started = performance.now();
  const taken = await takeIteration({
    producer,
    policy,
    config,
    dynamicSampling: preset.dropUniformGroups,
    trainerVersion: iteration - 1,
    exclusive,
  });
  await options.onTrajectories?.(taken.batch.generated, iteration);
  const trajectories = taken.batch.kept;
  const learningRate = iterationLearningRate(config, iteration);
  const onSamples = advantagesHook(options.onAdvantages, trajectories, iteration);
  const update = async () =>
    trajectories.length > 0
      ? await updatePolicy({
          ...{ policy, reference, trajectories, preset, config, iteration, learningRate, rng, onSamples },
          // A separate sampler is another engine: the off-policy correction's 'auto' turns on.
          samplerMatchesTrainer: options.sampler === undefined ? undefined : false,
        })
      : undefined;
  const report = await (exclusive === undefined ? update() : exclusive.with(update));
  const queueDepth = producer.queueDepth;
  await options.onWeightsUpdated?.(iteration);
  producer.publish(iteration);
  const seconds = (performance.now() - started) / 1000;
  const metrics = iterationMetrics({ iteration, collected: taken.batch, update: report, learningRate, seconds });
  metrics.scalars = { ...metrics.scalars, ...asyncScalars(taken, queueDepth, producer) };
  for (const warning of iterationWarnings(metrics, taken.batch.keptGroups, config, preset)) warn(warning);
  // The monitor reads each episode with its first observation, as the synchronous loop gives it.
  const prompts = taken.batch.generatedPrompts;
  return { metrics, generated: taken.batch.generated.map((t, i) => ({ ...t, prompt: prompts[i] })) };
}

function asyncScalars(taken: TakenIteration, queueDepth: number, producer: GroupProducer): Record<string, number> {
  const { maxQueueDepth, idleSeconds } = producer.drainCounters();
  const { staleness } = taken;
  return {
    'async/staleness/mean': staleness.length === 0 ? 0 : staleness.reduce((a, b) => a + b, 0) / staleness.length,
    'async/staleness/max': staleness.reduce((a, b) => Math.max(a, b), 0),
    'async/dropped': taken.dropped,
    'async/rescored': taken.rescored,
    'async/queueDepth': queueDepth,
    'async/queueDepthMax': maxQueueDepth,
    'async/producerIdleSeconds': idleSeconds,
    'async/trainerIdleSeconds': taken.idleSeconds,
  };
}
