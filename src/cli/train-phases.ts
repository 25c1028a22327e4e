/**
 * The phases of an `agentrl train` run, each resumable from what the run store holds:
 *
 *   1. start weights  — the SFT warm start (or `--init`), then the STaR round when `--star-tasks`
 *                       (star-start.ts), saved as the run's `start` state; a run stopped inside it
 *                       has none, and resuming runs the warm start again (it is deterministic from
 *                       the seed, so the result is the same);
 *   2. test before RL — the held-out success of the start weights (evaluation at step 0);
 *   3. RL iterations  — each committed with its resumable state; resuming continues after the last;
 *   4. test after RL  — the held-out success and the `final` checkpoint; a run whose iterations
 *                       are all done resumes here and is finished.
 *
 * The policy comes from the run's backend (backend-setup.ts: the built-in model, or a LoRA on a
 * Tinker server); the phases call only the TrainablePolicy contract.
 *
 * Ctrl-C / SIGTERM during the iterations finishes the iteration and saves it; in any other phase
 * the process stops at once (nothing there is worth saving half-done). Either way the run is then
 * `interrupted` and `--resume` continues it.
 */
import { join } from 'node:path';
import type { ReferencePolicy, TrainablePolicy } from '../policy/types.ts';
import type { RunStore } from '../store/run-store.ts';
import type { RunRecord } from '../store/types.ts';
import { algorithmPresets } from '../train/algorithm-presets.ts';
import { heldOutSuccess, runRl, type IterationMetrics } from '../train/rl.ts';
import { loadResumePoint, RunRecorder, type ResumePoint } from '../train/run-recorder.ts';
import type { RunInterrupt } from './interrupt.ts';
import type { RunSetup } from './model-setup.ts';
import { policyBackend } from './backend-setup.ts';
import { rolePhases } from './role-train-phases.ts';
import { starStart } from './star-start.ts';
import { stopStringsMetadata } from '../train/loop-config.ts';
import { TimeBudget } from './time-budget.ts';
import { Progress, formatSeconds, monitorField } from './progress.ts';
import { parseMonitorThresholds, rewardMonitor } from '../rewards/monitor/index.ts';
import type { EpisodeContext, Rubric } from '../rewards/index.ts';
import { openTracker } from '../trackers/open-tracker.ts';
import type { Tracker } from '../trackers/tracker.ts';
import type { TrainCommandOptions } from './train-command.ts';

export interface TrainPhasesOptions {
  store: RunStore;
  run: RunRecord;
  options: TrainCommandOptions;
  setup: RunSetup;
  interrupt: RunInterrupt;
  /** The run's own checkpoint folder. */
  dir: string;
  /** Whether this continues a stored run (`--resume`). */
  resumed: boolean;
  /** `--reward`: the rubric the RL phase trains on (src/rewards/); the env reward when absent. */
  rubric?: Rubric<EpisodeContext>;
}

export async function trainPhases(phases: TrainPhasesOptions): Promise<'completed' | 'interrupted'> {
  const { options, setup } = phases;
  const backend = policyBackend({ ...options, envOptions: setup.envOptions }, setup.descriptor, {
    valueHead: algorithmPresets[options.algo].valueHead,
    label: 'train',
    init: setup.init,
  });
  try {
    return await runPhases(phases, backend);
  } finally {
    await backend.close();
  }
}

/** What every phase uses: the run, its options, the env, the recorder and how to save a checkpoint folder. */
interface PhaseContext extends TrainPhasesOptions {
  env: () => ReturnType<RunSetup['descriptor']['make']>;
  recorder: RunRecorder;
  /** The options with `validationEpisodes` = the test episodes, for the held-out tests. */
  testConfig: TrainCommandOptions;
  save: (policy: TrainablePolicy, name: string, extra: Record<string, unknown>) => Promise<void>;
  /** `--max-minutes`: when the RL iterations stop early (time-budget.ts). */
  budget?: TimeBudget;
}

async function runPhases(
  phases: TrainPhasesOptions,
  backend: ReturnType<typeof policyBackend>,
): Promise<'completed' | 'interrupted'> {
  const { store, run, options, setup, dir } = phases;
  const started = performance.now();
  const context: PhaseContext = {
    ...phases,
    env: () => setup.descriptor.make(setup.envOptions),
    recorder: new RunRecorder({
      store,
      runId: run.id,
      trajectoriesPerIteration: options.recordTrajectories,
      validationEpisodes: options.validationEpisodes,
    }),
    testConfig: { ...options, validationEpisodes: options.testEpisodes },
    budget:
      options.maxMinutes === undefined
        ? undefined
        : new TimeBudget(
            {
              maxMinutes: options.maxMinutes,
              // heldOutSuccess plays each test seed 3 times: 2 sampled, 1 greedy.
              testEpisodes: options.testEpisodes * 3,
              episodesPerIteration: options.tasksPerIteration * options.groupSize,
            },
            started,
          ),
    save: (policy, name, extra) =>
      policy.save(join(dir, name), {
        metadata: { run: run.name, algo: options.algo, env: options.env, ...stopStringsMetadata(options), ...extra },
      }),
  };
  await startWeights(context, backend);
  // A policy per role (issue 33): the roles' own RL phases from the start weights.
  if (options.policies === 'per-role') return rolePhases(phases, backend);
  const point: ResumePoint<TrainablePolicy, ReferencePolicy> = (await loadResumePoint(store, run.id, {
    policy: backend.restorePolicy,
    reference: backend.restoreReference,
  }))!;
  const before = await testBeforeRl(context, point.policy);
  const { iterations, interrupted } = await rlIterations(context, point);
  if (interrupted) return 'interrupted';
  await testAfterRl(context, point.policy, { before, iterations, started });
  return 'completed';
}

/** 1. Start weights: the warm start (or `--init`), saved as the run's `start` state, unless the run has it. */
async function startWeights(
  { store, run, options, env, interrupt, resumed, dir, save, recorder }: PhaseContext,
  backend: ReturnType<typeof policyBackend>,
): Promise<void> {
  if (store.latestCheckpoint(run.id, 'start') !== undefined) return;
  interrupt.enter('the warm start');
  if (resumed) {
    console.error(
      `train: run ${run.name} stopped before its warm start ended; running the warm start again (deterministic from the seed)`,
    );
  }
  const started = await backend.start();
  // --star-tasks: a STaR round on the start weights (star-start.ts); the start state is the policy after it.
  const star = options.starTasks > 0 ? await starStart(started, env, options) : {};
  await save(started, 'start', { kind: 'start', ...star });
  await recorder.recordStart(started, { path: join(dir, 'start') });
}

/** 2. Held-out success before RL (the stored step-0 evaluation when there is one). */
async function testBeforeRl(
  { store, run, options, interrupt, env, testConfig, budget }: PhaseContext,
  policy: TrainablePolicy,
): Promise<number> {
  const stored = store.evaluations(run.id).find((e) => e.step === 0 && e.split === 'test')?.success;
  if (stored !== undefined) return stored;
  interrupt.enter('the held-out test before RL');
  const testStarted = performance.now();
  const measured = await heldOutSuccess(policy, env, testConfig);
  budget?.testTook((performance.now() - testStarted) / 1000);
  store.addEvaluation(run.id, { step: 0, split: 'test', episodes: options.testEpisodes, success: measured.sampled });
  console.error(`train: held-out test success before RL: ${describeSuccess(measured, options.testEpisodes)}`);
  return measured.sampled;
}

/** 3. RL iterations after the last committed one, each committed with its resumable state; the `latest` folder after them. */
async function rlIterations(
  context: PhaseContext,
  point: ResumePoint<TrainablePolicy, ReferencePolicy>,
): Promise<{ iterations: number; interrupted: boolean }> {
  const { run, options, interrupt, env, recorder, save, dir, budget } = context;
  const { policy, reference } = point;
  let iterations = point.resume?.iteration ?? 0;
  if (iterations >= options.iterations) return { iterations, interrupted: false };
  interrupt.enter('the RL iterations', { graceful: 'finishing this iteration, then saving it' });
  const progress = new Progress({ label: `rl ${options.algo}`, total: options.iterations });
  if (iterations > 0) progress.update(iterations, {}, true);
  let lastFields: Record<string, string | number> = {};
  const tracker = await openTracker(options, { name: run.name, config: run.config });
  const hooks = recorder.hooks();
  // The phase on the progress line: rollout progress, then the update once the episodes are in;
  // an env made after that is validation's (the update makes none).
  let updating = false;
  let budgetStop = false;
  budget?.iterationsStart();
  const result = await runRl({
    policy,
    reference,
    env: () => {
      if (updating) {
        updating = false;
        progress.phase('validate');
      }
      return env();
    },
    config: options,
    resume: point.resume,
    rubric: context.rubric,
    monitor: monitorFor(context),
    ...hooks,
    onTrajectories: async (trajectories, iteration) => {
      await hooks.onTrajectories?.(trajectories, iteration);
      updating = true;
      progress.phase('update');
    },
    shouldStop: () => {
      if (interrupt.stopRequested()) return true;
      budgetStop = budget?.exhausted() === true;
      return budgetStop;
    },
    onRolloutProgress: (done, total) => progress.phase('rollout', `${done}/${total}`),
    onIteration: async (m, state) => {
      updating = false;
      lastFields = progressFields(m);
      progress.iteration(m.iteration, lastFields);
      const folder = options.checkpointEvery > 0 && m.iteration % options.checkpointEvery === 0;
      if (folder) await save(policy, 'latest', { iteration: m.iteration });
      const recorded = await recorder.commit(policy, m, state, {
        checkpointPath: folder ? join(dir, 'latest') : undefined,
      });
      if (tracker) await logToTracker(tracker, m.iteration, recorded);
    },
  });
  iterations = result.history.at(-1)?.iteration ?? iterations;
  progress.done(lastFields);
  const stopReason =
    result.stopReason ?? (budgetStop && iterations < options.iterations ? budget?.describe() : undefined);
  if (stopReason !== undefined)
    console.error(`train: stopped after iteration ${iterations} of ${options.iterations}: ${stopReason}`);
  await tracker
    ?.finish(interrupt.signal !== undefined ? 'interrupted' : 'completed')
    .catch((error: Error) => console.error(`train: ${error.message}`));
  await save(policy, 'latest', { iteration: iterations });
  if (interrupt.signal === undefined) return { iterations, interrupted: false };
  console.error(`train: saved iteration ${iterations} of ${options.iterations} (weights in ${join(dir, 'latest')})`);
  return { iterations, interrupted: true };
}

/** The run's reward-hacking monitor (`--monitor`, `--monitor-thresholds`; the env's reward components), none when off. */
function monitorFor({ options, env }: PhaseContext) {
  if (options.monitor === 'off') return undefined;
  const thresholds = parseMonitorThresholds(options.monitorThresholds);
  return rewardMonitor({ config: { ...thresholds, mode: options.monitor }, rewardSpec: env().rewardComponents });
}

/** The fields of an iteration's progress line. */
function progressFields(m: IterationMetrics): Record<string, string | number> {
  return {
    ...monitorField(m.scalars),
    reward: m.reward,
    success: m.success,
    kl: m.klToReference,
    entropy: m.entropy,
    'gen tok/s': m.rolloutTokensPerSecond,
    'train tok/s': m.trainTokensPerSecond,
    ...(m.validationSuccess !== undefined ? { val: m.validationSuccess } : {}),
    // Episodes the rubric could not score (their groups were not trained on): shown, never hidden as 0.
    ...((m.scalars?.rewardFailures ?? 0) > 0 ? { 'reward failures': m.scalars?.rewardFailures ?? 0 } : {}),
  };
}

/** 4. Held-out success after RL and the `final` checkpoint; the run's summary line. */
async function testAfterRl(
  { store, run, options, interrupt, env, testConfig, save, dir }: PhaseContext,
  policy: TrainablePolicy,
  { before, iterations, started }: { before: number; iterations: number; started: number },
): Promise<void> {
  interrupt.enter('the held-out test after RL');
  console.error(`train: measuring held-out test success after RL (${options.testEpisodes} test seeds) …`);
  const measured = await heldOutSuccess(policy, env, testConfig);
  const after = measured.sampled;
  console.error(`train: held-out test success after RL: ${describeSuccess(measured, options.testEpisodes)}`);
  await save(policy, 'final', { iteration: iterations, testSuccess: after, testSuccessBefore: before });
  store.transaction(() => {
    store.addEvaluation(run.id, { step: iterations, split: 'test', episodes: options.testEpisodes, success: after });
    store.addCheckpoint(run.id, { step: iterations, kind: 'final', path: join(dir, 'final') });
  });
  console.log(
    `\n${options.env} / ${options.algo}: held-out test success (sampled) ${(before * 100).toFixed(1)}% before RL → ${(after * 100).toFixed(1)}% after ` +
      `${iterations} iterations (${formatSeconds((performance.now() - started) / 1000)} this session, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB); checkpoints in ${dir}`,
  );
}

function describeSuccess({ sampled, greedy }: { sampled: number; greedy: number }, seeds: number): string {
  return `${(sampled * 100).toFixed(1)}% sampled (temperature 1, 2 episodes on each of ${seeds} seeds), ${(greedy * 100).toFixed(1)}% greedy`;
}

/** A tracker that fails (server down) is reported, and training goes on: the run store is the record. */
async function logToTracker(tracker: Tracker, step: number, metrics: Record<string, number>): Promise<void> {
  try {
    await tracker.log(step, metrics);
  } catch (error) {
    console.error(
      `\ntrain: iteration ${step} not logged to the tracker (it is in the run store): ${(error as Error).message}`,
    );
  }
}
