/**
 * `agentrl train --env <name> --algo <algo>`: the main job. Warm-starts the built-in model by SFT
 * on the env's scripted expert (with random actions), measures held-out success, trains with RL
 * with a live progress line, checkpoints periodically, and ends by printing the held-out success
 * before and after RL (the phases: train-phases.ts).
 *
 * Every run is recorded in the run store (`--store`, default runs/agentrl.db): the effective
 * config, each iteration's metrics, trajectories and resumable state, committed together, so
 * `--resume <run>` continues a run that was interrupted, failed or killed, in whichever phase.
 * Each run has its own checkpoint folder (`checkpoints/<run name>` unless `--out`), and one
 * process at a time trains a run (a lock in the store). Everything a typo can break (flags, the
 * env and its options, `--init`, the backend's flags) is checked before the run is created.
 *
 * `--backend tinker --base-url … --base-model … --lora-rank …` trains a LoRA on a Tinker server
 * instead of the built-in model, recorded the same way (backend-setup.ts).
 *
 * `--model <folder | file.gguf | pulled name | checkpoint> [--lora-rank 16 …]` starts from a
 * pretrained model instead of the warm start: pure RL in the model's own chat format, LoRA
 * adapters only when --lora-rank is given (model-setup.ts, backend-setup.ts, docs/real-model-training.md).
 */
import { join } from 'node:path';
import { z } from 'zod';
import { environmentNames } from '../envs/index.ts';
import { rlConfigSchema } from '../train/rl.ts';
import { presetOptions } from '../train/env-presets.ts';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { RunStore } from '../store/run-store.ts';
import type { RunRecord } from '../store/types.ts';
import { checkRunSetup, modelSetupSchema, type RunSetup } from './model-setup.ts';
import { checkPresetOptions, presetTable, pretrainedPreset, pretrainedStart } from './model-presets.ts';
import { backendPreset, backendSchema, checkBackendOptions } from './backend-setup.ts';
import { RunInterrupt } from './interrupt.ts';
import { resolveOptions } from './config-file.ts';
import { flagHelp, rejectPositional } from './flags.ts';
import { effectiveConfig, runOptionsShape, sourceCommit } from './run-options.ts';
import { recordedRun } from './recorded-run.ts';
import { trainPhases } from './train-phases.ts';
import { trackerOptionsShape } from '../trackers/open-tracker.ts';
import { builtinRewards, type EpisodeContext, type Rubric, resolveRewardSpec } from '../rewards/index.ts';
import { monitorModeSchema, monitorThresholdsTextSchema } from '../rewards/monitor/index.ts';
import { multiAgentOptionsShape } from '../train/multi-agent/multi-agent-options.ts';
import { checkPerRoleOptions } from './role-train-phases.ts';
import { checkStarOptions, starOptionsShape } from './star-start.ts';

export const trainCommandSchema = z.object({
  env: z
    .string()
    .default('frozen-lake')
    .describe(`environment (${environmentNames().join(', ')})`),
  envOptions: z.string().default('{}').describe('environment options as JSON, e.g. {"size":3} (see agentrl envs)'),
  out: z
    .string()
    .optional()
    .describe("the run's checkpoint folder (default checkpoints/<run name>; never shared with another run)"),
  testEpisodes: z.number().int().positive().default(100).describe('held-out test episodes before and after RL'),
  maxMinutes: z
    .number()
    .positive()
    .optional()
    .describe(
      'wall-clock budget of this session in minutes: RL stops early, after a saved iteration, when another one and the test after RL would not fit (src/cli/time-budget.ts)',
    ),
  checkpointEvery: z
    .number()
    .int()
    .nonnegative()
    .default(5)
    .describe('checkpoint every N iterations (0 = only at the end)'),
  monitor: monitorModeSchema,
  monitorThresholds: monitorThresholdsTextSchema,
  ...rlConfigSchema.shape,
  reward: z
    .string()
    .optional()
    .describe(
      'train on a rubric instead of the env reward: name=weight,… over the built-in rewards (envReward, envSuccess, actionFormat, overlong), or a module whose default export is a rubric (docs/rewards.md)',
    ),
  historyTurns: rlConfigSchema.shape.historyTurns
    .removeDefault()
    .default(0)
    .describe("previous turns the policy sees: a count, or 'all' (the whole conversation); 0 keeps CPU contexts short"),
  ...modelSetupSchema.shape,
  ...backendSchema.shape,
  ...runOptionsShape,
  ...trackerOptionsShape,
  ...multiAgentOptionsShape,
  ...starOptionsShape,
});
export type TrainCommandOptions = z.infer<typeof trainCommandSchema>;

/**
 * The options a new run gets: defaults, then the env's training preset, the backend's and the
 * pretrained model's (model-presets.ts: no warm start, system prompt on, whole conversation, its
 * context and a LoRA learning rate), the config file, the flags.
 */
export function resolveTrainOptions(argv: readonly string[]) {
  const { options: plain } = resolveOptions(trainCommandSchema, argv);
  const fromModel = pretrainedPreset(plain);
  const base = { ...presetOptions(plain.env), ...backendPreset(plain.backend), ...fromModel };
  const start = pretrainedStart(plain);
  const sources = [
    `the ${plain.env} preset`,
    ...(plain.backend === 'builtin' ? [] : [`the ${plain.backend} backend`]),
    ...(Object.keys(fromModel).length > 0 ? [`the pretrained-model preset of ${start?.name ?? 'the --model'}`] : []),
  ];
  const baseSource =
    sources.length === 1 ? at(sources, 0, 'sources') : `${sources.slice(0, -1).join(', ')} and ${sources.at(-1)}`;
  return resolveOptions(trainCommandSchema, argv, { base, baseSource });
}

/** `agentrl train [--env x] --help`: each flag with the value that will run for that env and where it comes from. */
export function trainHelp(argv: readonly string[]): string {
  const { options, sources } = resolveTrainOptions(argv);
  const preset = Object.keys(presetOptions(options.env));
  const header =
    preset.length > 0
      ? `values for --env ${options.env}: its training preset (src/train/env-presets.ts) sets ${preset.join(', ')}; "runs X from …" marks a value that differs from the default`
      : `--env ${options.env} has no training preset: the defaults run, under --config and flags`;
  const effective = Object.fromEntries(
    Object.entries(options).map(([key, value]) => [key, { value, source: sources[key] ?? 'the default' }]),
  );
  return `  ${header}\n${flagHelp(trainCommandSchema, effective)}\n\n${presetTable()}`;
}

export async function trainCommand(argv: readonly string[]): Promise<number> {
  const interrupt = new RunInterrupt('train');
  try {
    const { options, positional, sources } = resolveTrainOptions(argv);
    rejectPositional(trainCommandSchema, positional, { '--env': environmentNames() });
    // A new run's setup is checked before the store is even opened; a resumed run's comes from the store.
    if (options.resume === undefined) {
      checkBackendOptions(options);
      checkPresetOptions(options, sources);
      // --policies per-role needs a multi-agent env: refused before the run is created.
      if (options.policies === 'per-role') checkPerRoleOptions(options);
      await checkStarOptions(options);
    }
    const setup = options.resume === undefined ? await checkRunSetup(options) : undefined;
    const rubric = setup !== undefined ? await rubricOf(options) : undefined;
    const store = RunStore.open(options.store);
    try {
      const opened =
        setup !== undefined ? newRun(store, options, setup, rubric) : await resumedRun(store, options.resume!, argv);
      return await recordedRun(
        {
          store,
          run: opened.run,
          label: 'train',
          interrupt,
          resumeCommand: `agentrl train --resume ${opened.run.name} --store ${store.path}`,
        },
        () =>
          trainPhases({
            store,
            interrupt,
            ...opened,
            dir: opened.run.checkpointDir!,
            resumed: options.resume !== undefined,
          }),
      );
    } finally {
      store.close();
    }
  } finally {
    interrupt.dispose();
  }
}

interface OpenedRun {
  run: RunRecord;
  options: TrainCommandOptions;
  setup: RunSetup;
  /** `--reward`'s rubric, when given. */
  rubric?: Rubric<EpisodeContext>;
}

/** `--reward`: the rubric the run trains on; a bad spec is an InvalidArgumentError (exit 2) before the run is created or locked. */
function rubricOf(options: TrainCommandOptions): Promise<Rubric<EpisodeContext>> | undefined {
  if (options.reward === undefined) return undefined;
  return resolveRewardSpec(options.reward, builtinRewards({ maxNewTokens: options.maxNewTokens }));
}

/** A new run, created only once its options, env and `--init` checkpoint are known good. */
function newRun(
  store: RunStore,
  options: TrainCommandOptions,
  setup: RunSetup,
  rubric: Rubric<EpisodeContext> | undefined,
): OpenedRun {
  const run = store.createRun({
    command: 'train',
    name: options.runName,
    namePrefix: `${options.env}-${options.algo}`,
    seed: options.seed,
    gitCommit: sourceCommit(),
    config: effectiveConfig(options),
    checkpointDir: (name) => options.out ?? join('checkpoints', name),
  });
  return { run, options, setup, ...(rubric === undefined ? {} : { rubric }) };
}

/** A stored run under its saved config and the given flags, locked by this process. */
async function resumedRun(store: RunStore, reference: string, argv: readonly string[]): Promise<OpenedRun> {
  const stored = store.run(reference);
  if (stored.command !== 'train')
    throw new InvalidArgumentError(
      `run ${stored.name} was recorded by agentrl ${stored.command}, which does not resume; only train runs do`,
    );
  const { options } = resolveOptions(trainCommandSchema, argv, { base: stored.config });
  checkBackendOptions(options);
  const setup = await checkRunSetup(options);
  const { tookOverFrom } = store.lockRun(stored.id);
  try {
    const rubric = await rubricOf(options);
    if (tookOverFrom)
      console.error(
        `train: run ${stored.name} was held by process ${tookOverFrom.pid}, which no longer runs; taking it over`,
      );
    const done = store.latestCheckpoint(stored.id, 'resume')?.step ?? 0;
    const finished = store.checkpoints(stored.id).some((c) => c.kind === 'final' && c.step === done);
    if (finished && done >= options.iterations) {
      if (stored.status !== 'completed') store.setStatus(stored.id, 'completed');
      throw new InvalidArgumentError(
        `run ${stored.name} has finished ${done} of ${options.iterations} iterations; pass --iterations N (> ${done}) to continue it`,
      );
    }
    // A run recorded before runs had their own folder gets one now (it wrote into a shared one).
    if (stored.checkpointDir === null)
      store.setCheckpointDir(stored.id, options.out ?? join('checkpoints', stored.name));
    store.setConfig(stored.id, effectiveConfig(options));
    store.setStatus(stored.id, 'running');
    const where =
      done >= options.iterations
        ? `: its ${done} iterations are done; running the held-out test after RL to finish it`
        : done > 0
          ? ` after iteration ${done} (${options.iterations - done} to go)`
          : ' from its start (no iteration was committed)';
    console.error(`train: resuming run ${stored.name}${where}`);
    return { run: store.run(stored.id), options, setup, ...(rubric === undefined ? {} : { rubric }) };
  } catch (error) {
    store.unlockRun(stored.id);
    throw error;
  }
}
