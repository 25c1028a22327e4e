/**
 * `agentrl dpo --env <name>`: online DPO on preference pairs built from rollouts (a successful and
 * a failed episode of the same task), from a warm-started or loaded model; prints held-out
 * success before and after. The policy is the one `agentrl train` builds (backend-setup.ts
 * `policyBackend`): `--model` starts from those weights in the model's own chat format (its
 * checkpoints carry its tokenizer files; the env instructions become a system message), and the
 * reference is restored from the starting policy's state as train's KL reference is. Options
 * come from defaults, `--config` and flags as for train; the run is recorded in the run store
 * (config, per-iteration metrics, test results, checkpoints) in its own checkpoint folder.
 * `--backend tinker --base-url … --base-model …` runs it on a Tinker server, with train's flags
 * and refusals (backend-setup.ts). DPO runs do not resume: Ctrl-C / SIGTERM saves the weights in
 * `<folder>/latest` and marks the run interrupted.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { environmentNames } from '../envs/index.ts';
import { RunStore } from '../store/run-store.ts';
import { dpoConfigSchema, runDpo, type DpoIterationMetrics } from '../train/dpo.ts';
import { validate } from '../train/rl.ts';
import {
  backendPreset,
  backendSchema,
  checkBackendOptions,
  policyBackend,
  type PolicyBackend,
} from './backend-setup.ts';
import { checkRunSetup, modelSetupSchema, type RunSetup } from './model-setup.ts';
import { checkPresetOptions, pretrainedPreset } from './model-presets.ts';
import { Progress } from './progress.ts';
import { rejectPositional } from './flags.ts';
import { resolveOptions } from './config-file.ts';
import { RunInterrupt } from './interrupt.ts';
import { recordedRun } from './recorded-run.ts';
import { stopStringsMetadata } from '../train/loop-config.ts';
import { effectiveConfig, runOptionsShape, sourceCommit } from './run-options.ts';

export const dpoCommandSchema = z.object({
  env: z
    .string()
    .default('frozen-lake')
    .describe(`environment (${environmentNames().join(', ')})`),
  envOptions: z.string().default('{}').describe('environment options as JSON, e.g. {"size":3} (see agentrl envs)'),
  out: z
    .string()
    .optional()
    .describe("the run's checkpoint folder (default checkpoints/<run name>; never shared with another run)"),
  testEpisodes: z.number().int().positive().default(100).describe('held-out test episodes before and after'),
  ...dpoConfigSchema.shape,
  ...modelSetupSchema.shape,
  maxSeqLen: z.number().int().positive().default(512).describe('context window (DPO compares whole episodes)'),
  ...backendSchema.shape,
  config: runOptionsShape.config,
  store: runOptionsShape.store,
  runName: z.string().optional().describe('name of the new run (default <env>-dpo-<id>)'),
});
export type DpoCommandOptions = z.infer<typeof dpoCommandSchema>;

export async function dpoCommand(argv: readonly string[]): Promise<number> {
  const interrupt = new RunInterrupt('dpo');
  try {
    const { options, positional, sources } = resolveDpoOptions(argv);
    rejectPositional(dpoCommandSchema, positional, { '--env': environmentNames() });
    // DPO trains no critic and no entropy bonus: only the backend's own refusals apply.
    checkBackendOptions({ ...options, algo: 'grpo', entropyCoef: 0 });
    checkPresetOptions(options, sources);
    const setup = await checkRunSetup(options);
    const store = RunStore.open(options.store);
    try {
      const run = store.createRun({
        command: 'dpo',
        name: options.runName,
        namePrefix: `${options.env}-dpo`,
        seed: options.seed,
        gitCommit: sourceCommit(),
        config: effectiveConfig(options),
        checkpointDir: (name) => options.out ?? join('checkpoints', name),
      });
      const dir = run.checkpointDir!;
      return await recordedRun({ store, run, label: 'dpo', interrupt }, async () => {
        const env = () => setup.descriptor.make(setup.envOptions);
        interrupt.enter('the warm start');
        const backend = dpoBackend(options, setup);
        const policy = await backend.start();
        const save = (name: string, extra: Record<string, unknown>) =>
          policy.save(join(dir, name), {
            metadata: { run: run.name, algo: 'dpo', env: options.env, ...stopStringsMetadata(options), ...extra },
          });
        const testConfig = { ...options, validationEpisodes: options.testEpisodes, historyTurns: 'all' as const };
        interrupt.enter('the held-out test before DPO');
        const before = await validate(policy, env, testConfig, 'test');
        store.addEvaluation(run.id, { step: 0, split: 'test', episodes: options.testEpisodes, success: before });
        console.error(`dpo: held-out test success before: ${(before * 100).toFixed(1)}%`);
        // The reference: a scoring copy of the starting policy, restored as train's KL reference is.
        const reference = await backend.restoreReference(await policy.saveState());
        interrupt.enter('the DPO iterations', { graceful: 'finishing this iteration, then saving' });
        const progress = new Progress({ label: 'dpo', total: options.iterations });
        const result = await runDpo({
          policy,
          reference,
          env,
          config: options,
          shouldStop: interrupt.stopRequested,
          onIteration: (m) => recordIteration(m, { progress, store, runId: run.id, options }),
        });
        progress.done();
        const iterations = result.history.length;
        if (interrupt.signal !== undefined) {
          await save('latest', { iteration: iterations });
          store.addCheckpoint(run.id, { step: iterations, kind: 'latest', path: join(dir, 'latest') });
          console.error(`dpo: saved the weights after iteration ${iterations} in ${join(dir, 'latest')}`);
          return 'interrupted';
        }
        interrupt.enter('the held-out test after DPO');
        const after = await validate(policy, env, testConfig, 'test');
        await save('final', { iteration: iterations, testSuccess: after, testSuccessBefore: before });
        store.transaction(() => {
          store.addEvaluation(run.id, {
            step: iterations,
            split: 'test',
            episodes: options.testEpisodes,
            success: after,
          });
          store.addCheckpoint(run.id, { step: iterations, kind: 'final', path: join(dir, 'final') });
        });
        console.log(
          `\n${options.env} / dpo: held-out test success ${(before * 100).toFixed(1)}% before → ${(after * 100).toFixed(1)}% after; checkpoint in ${dir}`,
        );
        return 'completed';
      });
    } finally {
      store.close();
    }
  } finally {
    interrupt.dispose();
  }
}

/** One DPO iteration shown on the progress line and recorded as a step of the run (its metrics and validation). */
function recordIteration(
  m: DpoIterationMetrics,
  {
    progress,
    store,
    runId,
    options,
  }: { progress: Progress; store: RunStore; runId: number; options: DpoCommandOptions },
): void {
  progress.update(
    m.iteration,
    {
      success: m.success,
      pairs: m.pairs,
      // An iteration without a pair trains nothing: no loss to show (NaN before).
      ...(m.pairs > 0 ? { loss: m.loss, 'reward acc': m.rewardAccuracy, margin: m.margin } : {}),
      ...(m.validationSuccess !== undefined ? { val: m.validationSuccess } : {}),
    },
    true,
  );
  store.recordStep(runId, {
    step: m.iteration,
    metrics: dpoMetrics(m),
    evaluations: validationOf(m, options.validationEpisodes),
  });
}

/** The policy `agentrl train` builds (backend-setup.ts): --model's weights in its own chat format, else the warm-started byte model. */
function dpoBackend(options: DpoCommandOptions, setup: RunSetup): PolicyBackend {
  return policyBackend({ ...options, envOptions: setup.envOptions, historyTurns: undefined }, setup.descriptor, {
    valueHead: false,
    label: 'dpo',
    init: setup.init,
  });
}

/** Defaults, then the backend's preset and the pretrained model's (model-presets.ts, as for train), the config file, the flags. */
export function resolveDpoOptions(argv: readonly string[]) {
  const { options: plain } = resolveOptions(dpoCommandSchema, argv);
  const base = Object.fromEntries(
    Object.entries({ ...backendPreset(plain.backend), ...pretrainedPreset(plain) }).filter(
      ([key]) => key in dpoCommandSchema.shape,
    ),
  );
  return resolveOptions(dpoCommandSchema, argv, {
    base,
    baseSource: "the backend's preset and the pretrained model's",
  });
}

/** The iteration's numbers as store metrics (the validation result is recorded as an evaluation too). */
function dpoMetrics({ iteration, ...values }: DpoIterationMetrics): Record<string, number> {
  return Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, number] => typeof entry[1] === 'number'),
  );
}

function validationOf(m: DpoIterationMetrics, episodes: number) {
  return m.validationSuccess === undefined ? [] : [{ split: 'validation', episodes, success: m.validationSuccess }];
}
