/**
 * `agentrl train --env <name> --algo <algo>`: the main job. Warm-starts the built-in model by SFT
 * on the env's scripted expert (with random actions), measures held-out success, trains with RL
 * with a live progress line, checkpoints periodically and on Ctrl-C, and ends by printing the
 * held-out success before and after RL.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { getEnvironment, environmentNames } from '../envs/index.ts';
import { TransformerModel } from '../model/model.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { algorithmPresets } from '../train/algorithm-presets.ts';
import { rlConfigSchema, runRl, validate } from '../train/rl.ts';
import { modelSetupSchema, parseEnvOptions, prepareModel } from './model-setup.ts';
import { Progress, formatSeconds } from './progress.ts';
import { parseFlags, validateFlags } from './flags.ts';
import { gracefulInterrupt } from './interrupt.ts';

export const trainCommandSchema = z.object({
  env: z.string().default('frozen-lake').describe(`environment (${environmentNames().join(', ')})`),
  envOptions: z.string().default('{}').describe('environment options as JSON, e.g. {"size":3} (see agentrl envs)'),
  out: z.string().optional().describe('checkpoint folder (default checkpoints/<env>-<algo>)'),
  testEpisodes: z.number().int().positive().default(100).describe('held-out test episodes before and after RL'),
  checkpointEvery: z.number().int().nonnegative().default(5).describe('checkpoint every N iterations (0 = only at the end)'),
  ...rlConfigSchema.shape,
  historyTurns: rlConfigSchema.shape.historyTurns.removeDefault().default(0).describe('previous turns the policy sees (-1 = the whole conversation); 0 keeps CPU contexts short'),
  ...modelSetupSchema.shape,
});
export type TrainCommandOptions = z.infer<typeof trainCommandSchema>;

export async function trainCommand(argv: readonly string[]): Promise<number> {
  const options = validateFlags(trainCommandSchema, parseFlags(trainCommandSchema, argv).values);
  const descriptor = getEnvironment(options.env);
  const envOptions = parseEnvOptions(options.envOptions);
  const env = () => descriptor.make(envOptions);
  const preset = algorithmPresets[options.algo];
  const out = options.out ?? join('checkpoints', `${options.env}-${options.algo}`);
  const started = performance.now();

  const model = await prepareModel({ ...options, envOptions }, descriptor, { valueHead: preset.valueHead, label: 'train' });

  const policy = new BuiltinPolicy({ model });
  const testConfig = { ...options, validationEpisodes: options.testEpisodes };
  const before = await validate(policy, env, testConfig, 'test');
  console.error(`train: held-out test success before RL: ${(before * 100).toFixed(1)}% (${options.testEpisodes} episodes, greedy)`);
  await saveCheckpoint(join(out, 'start'), { config: model.config, params: await model.hostParams(), extra: { kind: 'start', testSuccess: before } });

  const reference = await TransformerModel.fromParams(model.config, await model.hostParams());
  const interrupt = gracefulInterrupt('train', 'finishing this iteration, then validating and saving');
  const progress = new Progress({ label: `rl ${options.algo}`, total: options.iterations });
  let lastFields: Record<string, string | number> = {};
  const save = async (name: string, extra: Record<string, unknown>) =>
    saveCheckpoint(join(out, name), { config: model.config, params: await model.hostParams(), extra: { algo: options.algo, env: options.env, ...extra } });
  const result = await runRl({
    model,
    reference,
    env,
    config: options,
    shouldStop: interrupt.stopRequested,
    onRolloutProgress: (done, total) => progress.update(progress.currentValue(), { ...lastFields, rollout: `${done}/${total}` }),
    onIteration: async (m) => {
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
      if (options.checkpointEvery > 0 && m.iteration % options.checkpointEvery === 0) await save('latest', { iteration: m.iteration });
    },
  });
  progress.done(lastFields);
  interrupt.dispose();
  await save('latest', { iteration: result.history.length });

  const after = await validate(policy, env, testConfig, 'test');
  await save('final', { iteration: result.history.length, testSuccess: after, testSuccessBefore: before });
  console.log(
    `\n${options.env} / ${options.algo}: held-out test success ${(before * 100).toFixed(1)}% before RL → ${(after * 100).toFixed(1)}% after ` +
      `${result.history.length} iterations (${formatSeconds((performance.now() - started) / 1000)} total); checkpoints in ${out}`,
  );
  return 0;
}
