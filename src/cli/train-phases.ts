/**
 * The phases of an `agentrl train` run, each resumable from what the run store holds:
 *
 *   1. start weights  — the SFT warm start (or `--init`), saved as the run's `start` state; a run
 *                       stopped inside it has none, and resuming runs the warm start again (it is
 *                       deterministic from the seed, so the result is the same);
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
import type { TrainablePolicy } from '../policy/types.ts';
import type { RunStore } from '../store/run-store.ts';
import type { RunRecord } from '../store/types.ts';
import { algorithmPresets } from '../train/algorithm-presets.ts';
import { heldOutSuccess, runRl } from '../train/rl.ts';
import { loadResumePoint, RunRecorder } from '../train/run-recorder.ts';
import type { RunInterrupt } from './interrupt.ts';
import type { RunSetup } from './model-setup.ts';
import { policyBackend } from './backend-setup.ts';
import { Progress, formatSeconds } from './progress.ts';
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

async function runPhases(
  { store, run, options, setup, interrupt, dir, resumed }: TrainPhasesOptions,
  backend: ReturnType<typeof policyBackend>,
): Promise<'completed' | 'interrupted'> {
  const env = () => setup.descriptor.make(setup.envOptions);
  const started = performance.now();
  const recorder = new RunRecorder({ store, runId: run.id, trajectoriesPerIteration: options.recordTrajectories, validationEpisodes: options.validationEpisodes });
  const testConfig = { ...options, validationEpisodes: options.testEpisodes };
  const save = (policy: TrainablePolicy, name: string, extra: Record<string, unknown>) =>
    policy.save(join(dir, name), { metadata: { run: run.name, algo: options.algo, env: options.env, ...extra } });

  // 1. Start weights.
  if (store.latestCheckpoint(run.id, 'start') === undefined) {
    interrupt.enter('the warm start');
    if (resumed) {
      console.error(`train: run ${run.name} stopped before its warm start ended; running the warm start again (deterministic from the seed)`);
    }
    const started = await backend.start();
    await save(started, 'start', { kind: 'start' });
    await recorder.recordStart(started, { path: join(dir, 'start') });
  }
  const point = (await loadResumePoint(store, run.id, { policy: backend.restorePolicy, reference: backend.restoreReference }))!;
  const { policy, reference } = point;

  // 2. Held-out success before RL.
  let before = store.evaluations(run.id).find((e) => e.step === 0 && e.split === 'test')?.success;
  if (before === undefined) {
    interrupt.enter('the held-out test before RL');
    const measured = await heldOutSuccess(policy, env, testConfig);
    before = measured.sampled;
    store.addEvaluation(run.id, { step: 0, split: 'test', episodes: options.testEpisodes, success: before });
    console.error(`train: held-out test success before RL: ${describeSuccess(measured, options.testEpisodes)}`);
  }

  // 3. RL iterations.
  let iterations = point.resume?.iteration ?? 0;
  if (iterations < options.iterations) {
    interrupt.enter('the RL iterations', { graceful: 'finishing this iteration, then saving it' });
    const progress = new Progress({ label: `rl ${options.algo}`, total: options.iterations });
    if (iterations > 0) progress.update(iterations, {}, true);
    let lastFields: Record<string, string | number> = {};
    const tracker = await openTracker(options, { name: run.name, config: run.config });
    const hooks = recorder.hooks();
    // The phase on the progress line: rollout progress, then the update once the episodes are in;
    // an env made after that is validation's (the update makes none).
    let updating = false;
    const result = await runRl({
      policy,
      reference,
      env: () => {
        if (updating) (updating = false), progress.phase('validate');
        return env();
      },
      config: options,
      resume: point.resume,
      ...hooks,
      onTrajectories: async (trajectories, iteration) => {
        await hooks.onTrajectories!(trajectories, iteration);
        updating = true;
        progress.phase('update');
      },
      shouldStop: interrupt.stopRequested,
      onRolloutProgress: (done, total) => progress.phase('rollout', `${done}/${total}`),
      onIteration: async (m, state) => {
        updating = false;
        lastFields = {
          reward: m.reward,
          success: m.success,
          kl: m.klToReference,
          entropy: m.entropy,
          'gen tok/s': m.rolloutTokensPerSecond,
          'train tok/s': m.trainTokensPerSecond,
          ...(m.validationSuccess !== undefined ? { val: m.validationSuccess } : {}),
        };
        progress.iteration(m.iteration, lastFields);
        const folder = options.checkpointEvery > 0 && m.iteration % options.checkpointEvery === 0;
        if (folder) await save(policy, 'latest', { iteration: m.iteration });
        const recorded = await recorder.commit(policy, m, state, { checkpointPath: folder ? join(dir, 'latest') : undefined });
        if (tracker) await logToTracker(tracker, m.iteration, recorded);
      },
    });
    iterations = result.history.at(-1)?.iteration ?? iterations;
    progress.done(lastFields);
    await tracker?.finish(interrupt.signal !== undefined ? 'interrupted' : 'completed').catch((error: Error) => console.error(`train: ${error.message}`));
    await save(policy, 'latest', { iteration: iterations });
    if (interrupt.signal !== undefined) {
      console.error(`train: saved iteration ${iterations} of ${options.iterations} (weights in ${join(dir, 'latest')})`);
      return 'interrupted';
    }
  }

  // 4. Held-out success after RL, the final checkpoint.
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
      `${iterations} iterations (${formatSeconds((performance.now() - started) / 1000)} this session); checkpoints in ${dir}`,
  );
  return 'completed';
}

function describeSuccess({ sampled, greedy }: { sampled: number; greedy: number }, seeds: number): string {
  return `${(sampled * 100).toFixed(1)}% sampled (temperature 1, 2 episodes on each of ${seeds} seeds), ${(greedy * 100).toFixed(1)}% greedy`;
}

/** A tracker that fails (server down) is reported, and training goes on: the run store is the record. */
async function logToTracker(tracker: Tracker, step: number, metrics: Record<string, number>): Promise<void> {
  try {
    await tracker.log(step, metrics);
  } catch (error) {
    console.error(`\ntrain: iteration ${step} not logged to the tracker (it is in the run store): ${(error as Error).message}`);
  }
}
