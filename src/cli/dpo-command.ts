/**
 * `agentrl dpo --env <name>`: online DPO on preference pairs built from rollouts (a successful and
 * a failed episode of the same task), from a warm-started or loaded model; prints held-out
 * success before and after.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { getEnvironment, environmentNames } from '../envs/index.ts';
import { TransformerModel } from '../model/model.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { dpoConfigSchema, runDpo } from '../train/dpo.ts';
import { validate } from '../train/rl.ts';
import { modelSetupSchema, parseEnvOptions, prepareModel } from './model-setup.ts';
import { Progress } from './progress.ts';
import { parseFlags, validateFlags } from './flags.ts';
import { gracefulInterrupt } from './interrupt.ts';

export const dpoCommandSchema = z.object({
  env: z.string().default('frozen-lake').describe(`environment (${environmentNames().join(', ')})`),
  envOptions: z.string().default('{}').describe('environment options as JSON, e.g. {"size":3} (see agentrl envs)'),
  out: z.string().optional().describe('checkpoint folder (default checkpoints/<env>-dpo)'),
  testEpisodes: z.number().int().positive().default(100).describe('held-out test episodes before and after'),
  ...dpoConfigSchema.shape,
  ...modelSetupSchema.shape,
  maxSeqLen: z.number().int().positive().default(512).describe('context window (DPO compares whole episodes)'),
});

export async function dpoCommand(argv: readonly string[]): Promise<number> {
  const options = validateFlags(dpoCommandSchema, parseFlags(dpoCommandSchema, argv).values);
  const descriptor = getEnvironment(options.env);
  const envOptions = parseEnvOptions(options.envOptions);
  const env = () => descriptor.make(envOptions);
  const out = options.out ?? join('checkpoints', `${options.env}-dpo`);
  const model = await prepareModel({ ...options, envOptions, historyTurns: undefined }, descriptor, { valueHead: false, label: 'dpo' });
  const policy = new BuiltinPolicy({ model });
  const testConfig = { ...options, validationEpisodes: options.testEpisodes, historyTurns: -1 };
  const before = await validate(policy, env, testConfig, 'test');
  console.error(`dpo: held-out test success before: ${(before * 100).toFixed(1)}%`);
  const reference = await TransformerModel.fromParams(model.config, await model.hostParams());
  const interrupt = gracefulInterrupt('dpo', 'finishing this iteration, then saving');
  const progress = new Progress({ label: 'dpo', total: options.iterations });
  const result = await runDpo({
    model,
    reference,
    env,
    config: options,
    shouldStop: interrupt.stopRequested,
    onIteration: (m) =>
      progress.update(
        m.iteration,
        {
          success: m.success,
          pairs: m.pairs,
          loss: m.loss,
          'reward acc': m.rewardAccuracy,
          margin: m.margin,
          ...(m.validationSuccess !== undefined ? { val: m.validationSuccess } : {}),
        },
        true,
      ),
  });
  progress.done();
  interrupt.dispose();
  const after = await validate(policy, env, testConfig, 'test');
  await saveCheckpoint(join(out, 'final'), {
    config: model.config,
    params: await model.hostParams(),
    extra: { algo: 'dpo', env: options.env, iteration: result.history.length, testSuccess: after, testSuccessBefore: before },
  });
  console.log(`\n${options.env} / dpo: held-out test success ${(before * 100).toFixed(1)}% before → ${(after * 100).toFixed(1)}% after; checkpoint in ${out}`);
  return 0;
}
