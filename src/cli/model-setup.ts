/**
 * The starting policy of `agentrl train` and `agentrl dpo`: a checkpoint (`--init`), or a fresh
 * built-in model warm-started by SFT on the environment's scripted expert (`warmStartPolicy`,
 * through the TrainablePolicy contract; backend-setup.ts uses it for the other backends).
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { getEnvironment, type EnvDescriptor } from '../envs/index.ts';
import { modelConfigSchema, withZeroValueHead } from '../model/config.ts';
import { TransformerModel } from '../model/model.ts';
import type { LoadedCheckpoint } from '../model/checkpoint.ts';
import { loadModelCheckpoint } from '../model/model-sources.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import { warmStart, warmStartConfigSchema } from '../train/warm-start.ts';
import { Progress } from './progress.ts';

/** The built-in model the main job trains: small enough for a 2-core CPU. */
export const defaultTrainModel = {
  vocabSize: 272,
  hiddenSize: 128,
  numLayers: 4,
  numHeads: 4,
  numKvHeads: 4,
  intermediateSize: 512,
  maxSeqLen: 256,
} as const;

/** Flags shared by the commands that start from a warm-started or loaded model. */
export const modelSetupSchema = z.object({
  init: z.string().optional().describe('start from this checkpoint, Hugging Face folder, .gguf file or pulled model (agentrl models list) instead of the SFT warm start'),
  ...warmStartConfigSchema.shape,
  ...modelConfigSchema.partial().omit({ valueHead: true }).shape,
});

/** `--env-options` JSON → an options object (validated by the env's own schema when it is made). */
export function parseEnvOptions(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(`--env-options is not JSON: ${(error as Error).message}`, { text });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`--env-options must be a JSON object, got ${text}`, { text });
  }
  return value as Record<string, unknown>;
}

/** What a run starts from, checked before the run is recorded: the env, its options, the `--init` checkpoint. */
export interface RunSetup {
  descriptor: EnvDescriptor;
  envOptions: Record<string, unknown>;
  init?: LoadedCheckpoint;
}

/**
 * Checks everything a typo can break before a run is created in the store: the env name, its
 * options (by making the env once) and the `--init` checkpoint (loaded here, used by prepareModel).
 */
export async function checkRunSetup(options: { env: string; envOptions: string; init?: string }): Promise<RunSetup> {
  const descriptor = getEnvironment(options.env);
  const envOptions = parseEnvOptions(options.envOptions);
  descriptor.make(envOptions);
  const init = options.init === undefined ? undefined : await loadModelCheckpoint(options.init);
  return { descriptor, envOptions, init };
}

export type PrepareModelOptions = z.infer<typeof modelSetupSchema> & {
  seed: number;
  maxTurns: number;
  maxNewTokens: number;
  systemPrompt: boolean;
  historyTurns?: number;
  envOptions?: Record<string, unknown>;
};

export async function prepareModel(
  options: PrepareModelOptions,
  descriptor: EnvDescriptor,
  { valueHead, label, init }: { valueHead: boolean; label: string; init?: LoadedCheckpoint },
): Promise<TransformerModel> {
  if (options.init !== undefined) {
    const checkpoint = init ?? (await loadModelCheckpoint(options.init));
    // A critic starts at zero on top of a checkpoint trained without one.
    const loaded = valueHead ? withZeroValueHead(checkpoint.config, checkpoint.params) : checkpoint;
    console.error(`${label}: loaded ${options.init}`);
    return TransformerModel.fromParams(loaded.config, loaded.params);
  }
  const modelConfig: Record<string, unknown> = { ...defaultTrainModel, valueHead };
  for (const key of Object.keys(modelConfigSchema.shape)) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined && key !== 'valueHead') modelConfig[key] = value;
  }
  const model = await TransformerModel.create(modelConfig, { seed: options.seed });
  if (options.demonstrations > 0 && options.sftSteps > 0) {
    await warmStartPolicy(new BuiltinPolicy({ model }), options, descriptor, label);
    // RL starts with a fresh optimizer: the SFT moments (at a 30-100x larger learning rate) say
    // nothing about the RL gradients. bench:learning starts RL the same way.
    return TransformerModel.fromParams(model.config, await model.hostParams());
  }
  return model;
}

/** The SFT warm start on the env's scripted expert, through the contract (no-op when --demonstrations or --sft-steps is 0). */
export async function warmStartPolicy(policy: TrainablePolicy, options: PrepareModelOptions, descriptor: EnvDescriptor, label: string): Promise<void> {
  if (options.demonstrations === 0 || options.sftSteps === 0) return;
  const progress = new Progress({ label: 'warm start (sft)', total: options.sftSteps });
  const result = await warmStart({
    policy,
    env: () => descriptor.make(options.envOptions ?? {}),
    expert: (seed, randomActionRate) => descriptor.expert({ seed, randomActionRate }),
    config: options,
    maxTurns: options.maxTurns,
    historyTurns: options.historyTurns === undefined || options.historyTurns < 0 ? undefined : options.historyTurns,
    maxNewTokens: options.maxNewTokens,
    instructions: options.systemPrompt,
    // A backend that cannot clip warm-starts unclipped.
    maxGradNorm: policy.capabilities.gradientClipping ? undefined : 0,
    onProgress: (p) => progress.update(p.step, { loss: p.loss, 'tok/s': p.tokensPerSecond }),
  });
  progress.done({ loss: result.finalLoss });
  console.error(
    `${label}: warm start on ${options.demonstrations} expert episodes (${(options.randomActionRate * 100).toFixed(0)}% random actions, ` +
      `expert success ${(result.demonstrationSuccess * 100).toFixed(0)}%)`,
  );
}

