/**
 * `agentrl train --env <name> --algo <algo>`: the main job. Warm-starts the built-in model by SFT
 * on the env's scripted expert (with random actions), measures held-out success, trains with RL
 * with a live progress line, checkpoints periodically and on Ctrl-C, and ends by printing the
 * held-out success before and after RL.
 *
 * Every run is recorded in the run store (`--store`, default runs/agentrl.db): the effective
 * config, each iteration's metrics, trajectories and resumable state, committed together, so
 * `--resume <run>` continues a stopped or killed run exactly where its last iteration ended.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { getEnvironment, environmentNames } from '../envs/index.ts';
import { TransformerModel } from '../model/model.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { algorithmPresets } from '../train/algorithm-presets.ts';
import { heldOutSuccess, rlConfigSchema, runRl } from '../train/rl.ts';
import { presetOptions } from '../train/env-presets.ts';
import { modelSetupSchema, parseEnvOptions, prepareModel } from './model-setup.ts';
import { Progress, formatSeconds } from './progress.ts';
import { gracefulInterrupt } from './interrupt.ts';
import { resolveOptions } from './config-file.ts';
import { effectiveConfig, runOptionsShape, sourceCommit } from './run-options.ts';
import { InvalidArgumentError } from '../core/errors.ts';
import { RunStore } from '../store/run-store.ts';
import { loadResumePoint, RunRecorder, type ResumePoint } from '../train/run-recorder.ts';

export const trainCommandSchema = z.object({
  env: z.string().default('frozen-lake').describe(`environment (${environmentNames().join(', ')})`),
  envOptions: z.string().default('{}').describe('environment options as JSON, e.g. {"size":3} (see agentrl envs)'),
  out: z.string().optional().describe('checkpoint folder (default checkpoints/<env>-<algo>)'),
  testEpisodes: z.number().int().positive().default(100).describe('held-out test episodes before and after RL'),
  checkpointEvery: z.number().int().nonnegative().default(5).describe('checkpoint every N iterations (0 = only at the end)'),
  ...rlConfigSchema.shape,
  historyTurns: rlConfigSchema.shape.historyTurns.removeDefault().default(0).describe('previous turns the policy sees (-1 = the whole conversation); 0 keeps CPU contexts short'),
  ...modelSetupSchema.shape,
  ...runOptionsShape,
});
export type TrainCommandOptions = z.infer<typeof trainCommandSchema>;

export async function trainCommand(argv: readonly string[]): Promise<number> {
  // The env's training preset (src/train/env-presets.ts) sits under config files and flags.
  const { options: plain } = resolveOptions(trainCommandSchema, argv);
  const { options: invoked } = resolveOptions(trainCommandSchema, argv, { base: presetOptions(plain.env) });
  const store = RunStore.open(invoked.store);
  try {
    return await train(store, invoked, argv);
  } finally {
    store.close();
  }
}

/** A new run, or with `--resume` the stored run's config under the given flags and its resume point. */
async function openRun(store: RunStore, invoked: TrainCommandOptions, argv: readonly string[]) {
  if (invoked.resume === undefined) {
    const run = store.createRun({
      command: 'train',
      name: invoked.runName,
      namePrefix: `${invoked.env}-${invoked.algo}`,
      seed: invoked.seed,
      gitCommit: sourceCommit(),
      config: effectiveConfig(invoked),
    });
    return { run, options: invoked, point: undefined };
  }
  const stored = store.run(invoked.resume);
  const { options } = resolveOptions(trainCommandSchema, argv, { base: stored.config });
  const point = await loadResumePoint(store, stored.id);
  if (point === undefined) throw new InvalidArgumentError(`run ${stored.name} has no checkpoint to resume from (it stopped before its first iteration ended)`);
  if (point.resume.iteration >= options.iterations) {
    throw new InvalidArgumentError(`run ${stored.name} has finished ${point.resume.iteration} of ${options.iterations} iterations; pass --iterations N (> ${point.resume.iteration}) to continue it`);
  }
  store.setConfig(stored.id, effectiveConfig(options));
  store.setStatus(stored.id, 'running');
  console.error(`train: resuming run ${stored.name} after iteration ${point.resume.iteration} (optimizer step ${point.model.step})`);
  return { run: stored, options, point };
}

async function train(store: RunStore, invoked: TrainCommandOptions, argv: readonly string[]): Promise<number> {
  const { run, options, point } = await openRun(store, invoked, argv);
  try {
    const stopped = await trainRun(store, run.id, options, point);
    store.setStatus(run.id, stopped ? 'stopped' : 'completed');
  } catch (error) {
    store.setStatus(run.id, 'failed');
    throw error;
  }
  console.log(`run ${run.name} recorded in ${store.path} (agentrl dashboard --store ${store.path})`);
  return 0;
}

async function trainRun(store: RunStore, runId: number, options: TrainCommandOptions, point: ResumePoint | undefined): Promise<boolean> {
  const descriptor = getEnvironment(options.env);
  const envOptions = parseEnvOptions(options.envOptions);
  const env = () => descriptor.make(envOptions);
  const preset = algorithmPresets[options.algo];
  const out = options.out ?? join('checkpoints', `${options.env}-${options.algo}`);
  const started = performance.now();

  const recorder = new RunRecorder({ store, runId, trajectoriesPerIteration: options.recordTrajectories, validationEpisodes: options.validationEpisodes });
  const testConfig = { ...options, validationEpisodes: options.testEpisodes };
  let model: TransformerModel;
  let reference: TransformerModel;
  let before: number;
  if (point === undefined) {
    model = await prepareModel({ ...options, envOptions }, descriptor, { valueHead: preset.valueHead, label: 'train' });
    const measured = await heldOutSuccess(new BuiltinPolicy({ model }), env, testConfig);
    before = measured.sampled;
    console.error(`train: held-out test success before RL: ${describeSuccess(measured, options.testEpisodes)}`);
    await saveCheckpoint(join(out, 'start'), { config: model.config, params: await model.hostParams(), extra: { kind: 'start', testSuccess: before } });
    reference = await TransformerModel.fromParams(model.config, await model.hostParams());
    await recorder.recordStart(reference, { path: join(out, 'start'), testSuccess: before, testEpisodes: options.testEpisodes });
  } else {
    ({ model, reference } = point);
    before = store.evaluations(runId).find((e) => e.step === 0 && e.split === 'test')?.success ?? NaN;
  }
  const policy = new BuiltinPolicy({ model });
  const interrupt = gracefulInterrupt('train', 'finishing this iteration, then validating and saving');
  const progress = new Progress({ label: `rl ${options.algo}`, total: options.iterations });
  if (point) progress.update(point.resume.iteration, {}, true);
  let lastFields: Record<string, string | number> = {};
  const save = async (name: string, extra: Record<string, unknown>) =>
    saveCheckpoint(join(out, name), { config: model.config, params: await model.hostParams(), extra: { algo: options.algo, env: options.env, ...extra } });
  const result = await runRl({
    model,
    reference,
    env,
    config: options,
    resume: point?.resume,
    ...recorder.hooks(),
    shouldStop: interrupt.stopRequested,
    onRolloutProgress: (done, total) => progress.update(progress.currentValue(), { ...lastFields, rollout: `${done}/${total}` }),
    onIteration: async (m, state) => {
      lastFields = {
        reward: m.reward,
        success: m.success,
        kl: m.kl,
        entropy: m.entropy,
        'gen tok/s': m.rolloutTokensPerSecond,
        'train tok/s': m.trainTokensPerSecond,
        ...(m.validationSuccess !== undefined ? { val: m.validationSuccess } : {}),
      };
      progress.update(m.iteration, lastFields, true);
      const folder = options.checkpointEvery > 0 && m.iteration % options.checkpointEvery === 0;
      if (folder) await save('latest', { iteration: m.iteration });
      await recorder.commit(model, m, state, { checkpointPath: folder ? join(out, 'latest') : undefined });
    },
  });
  const iterations = result.history.at(-1)?.iteration ?? point?.resume.iteration ?? 0;
  progress.done(lastFields);
  interrupt.dispose();
  await save('latest', { iteration: iterations });

  const measured = await heldOutSuccess(policy, env, testConfig);
  const after = measured.sampled;
  console.error(`train: held-out test success after RL: ${describeSuccess(measured, options.testEpisodes)}`);
  await save('final', { iteration: iterations, testSuccess: after, testSuccessBefore: before });
  store.transaction(() => {
    store.addEvaluation(runId, { step: iterations, split: 'test', episodes: options.testEpisodes, success: after });
    store.addCheckpoint(runId, { step: iterations, kind: 'final', path: join(out, 'final') });
  });
  console.log(
    `\n${options.env} / ${options.algo}: held-out test success (sampled) ${(before * 100).toFixed(1)}% before RL → ${(after * 100).toFixed(1)}% after ` +
      `${iterations} iterations (${formatSeconds((performance.now() - started) / 1000)} total); checkpoints in ${out}`,
  );
  return interrupt.stopRequested() && iterations < options.iterations;
}

function describeSuccess({ sampled, greedy }: { sampled: number; greedy: number }, seeds: number): string {
  return `${(sampled * 100).toFixed(1)}% sampled (temperature 1, 2 episodes on each of ${seeds} seeds), ${(greedy * 100).toFixed(1)}% greedy`;
}
