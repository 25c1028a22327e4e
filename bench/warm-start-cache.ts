/**
 * The learning benches' SFT warm start on an env's scripted expert (its training preset,
 * src/train/env-presets.ts), saved under `<checkpoints>/<env>-sft` with the settings that made it;
 * a later bench with the same folder and the same settings reuses it instead of training it again.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { getEnvironment } from '../src/envs/index.ts';
import { TransformerModel } from '../src/engine/transformer-model.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { warmStart, warmStartConfigSchema, type WarmStartConfig } from '../src/train/warm-start.ts';
import { defaultTrainModel } from '../src/cli/model-setup.ts';
import { loadCheckpoint, saveCheckpoint } from '../src/model/checkpoint.ts';
import type { RlConfig } from '../src/train/rl.ts';
import type { trainingPresets } from '../src/train/env-presets.ts';

export interface WarmStarted {
  model: TransformerModel;
  sftMinutes: number;
  warmConfig: WarmStartConfig;
}

/** The warm-started model of `name` (trained, or reused from `checkpoints` when its settings match). */
export async function warmStartedModel({
  name,
  preset,
  rl,
  seed,
  checkpoints,
}: {
  name: string;
  preset: NonNullable<(typeof trainingPresets)[string]>;
  rl: Pick<RlConfig, 'maxTurns' | 'maxNewTokens'>;
  seed: number;
  checkpoints: string | undefined;
}): Promise<WarmStarted> {
  const descriptor = getEnvironment(name);
  const warmConfig = warmStartConfigSchema.parse(preset.warm);
  // What makes a saved warm start reusable: the same model, seed, environment and warm-start settings.
  const warmKey = JSON.stringify({
    model: defaultTrainModel,
    seed,
    envOptions: preset.envOptions,
    warm: warmConfig,
    maxTurns: rl.maxTurns,
    maxNewTokens: rl.maxNewTokens,
  });
  const sftDir = checkpoints === undefined ? undefined : join(checkpoints, `${name}-sft`);
  const saved =
    sftDir !== undefined && existsSync(join(sftDir, 'config.json')) ? await loadCheckpoint(sftDir) : undefined;
  if (saved !== undefined && saved.extra.warmKey === warmKey) {
    const sftMinutes = saved.extra.sftMinutes as number;
    console.error(`${name}: warm start reused from ${sftDir} (trained in ${sftMinutes.toFixed(1)} min)`);
    return { model: await TransformerModel.fromParams(saved.config, saved.params), sftMinutes, warmConfig };
  }
  if (saved !== undefined) console.error(`${name}: the warm start in ${sftDir} has other settings; training a new one`);
  const started = performance.now();
  const model = await TransformerModel.create({ ...defaultTrainModel, valueHead: false }, { seed });
  const warm = await warmStart({
    policy: new BuiltinPolicy({ model }),
    env: () => descriptor.make(preset.envOptions),
    expert: (s, randomActionRate) => descriptor.expert({ seed: s, randomActionRate }),
    config: warmConfig,
    maxTurns: rl.maxTurns,
    historyTurns: 0,
    maxNewTokens: rl.maxNewTokens,
    instructions: false,
    onProgress: (p) => {
      if (p.step % 100 === 0)
        console.error(`  ${name} sft ${p.step}/${warmConfig.sftSteps}: loss ${p.loss.toFixed(4)}`);
    },
  });
  const sftMinutes = (performance.now() - started) / 60_000;
  console.error(`${name}: warm start loss ${warm.finalLoss.toFixed(3)} (${sftMinutes.toFixed(1)} min)`);
  if (sftDir !== undefined) {
    await saveCheckpoint(sftDir, {
      config: model.config,
      params: await model.hostParams(),
      extra: { warmKey, sftMinutes },
    });
  }
  return { model, sftMinutes, warmConfig };
}
