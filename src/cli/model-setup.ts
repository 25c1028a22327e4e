/**
 * The starting policy of `agentrl train` and `agentrl dpo`: a model (`--model`, alias `--init`),
 * or a fresh built-in model warm-started by SFT on the environment's scripted expert
 * (`warmStartPolicy`, through the TrainablePolicy contract; backend-setup.ts uses it for the
 * other backends).
 *
 * One rule for `--model <folder | file.gguf | pulled name | agentrl checkpoint>` (and `--init`,
 * its older name): the run starts from those weights with no SFT warm start (pure RL; `--warm-start`
 * runs one on them), and with
 * the model's own tokenizer and chat format when it has one (a pretrained model's tokenizer.json +
 * chat template, a GGUF's metadata, a checkpoint of such a model); an agentrl byte-model
 * checkpoint keeps the byte template. For a model with its own chat format the env instructions
 * are a system message and the policy sees the whole conversation by default (model-presets.ts).
 * Checked before a run is created: the model has a tokenizer, the tokenizer fits its vocabulary,
 * and a model's own tokenizer comes with a chat template.
 */
import { z } from 'zod';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatTemplateError, CheckpointError, InvalidArgumentError, ModelMismatchError } from '../core/errors.ts';
import { getEnvironment, type EnvDescriptor } from '../envs/index.ts';
import { modelConfigSchema, withZeroValueHead, type ModelConfig } from '../model/config.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { usesByteTemplate, type LoadedCheckpoint } from '../model/checkpoint.ts';
import { loraShapes, type LoraConfigInput } from '../model/lora.ts';
import { baseQuantizations } from '../model/model-options.ts';
import { describeModel, loadModelCheckpoint, resolveModelSource, sameModel } from '../model/model-sources.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import { rolloutHistoryTurns, type HistoryTurns } from '../train/history-turns.ts';
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
  model: z
    .string()
    .optional()
    .describe(
      'start from this model instead of the SFT warm start (pure RL): a Hugging Face folder, a .gguf file, a pulled model (agentrl models list) or an agentrl checkpoint; a model with its own tokenizer and chat template trains in that format, with the env instructions as a system message and the whole conversation in view by default',
    ),
  init: z.string().optional().describe('alias of --model (its older name; pass one of them)'),
  warmStart: z
    .boolean()
    .optional()
    .describe(
      "run the SFT warm start on the env's scripted expert first (default: on for a fresh byte model, off from --model or a pretrained --base-model: model-presets.ts)",
    ),
  baseQuantization: z
    .enum(baseQuantizations)
    .optional()
    .describe(
      "the base's matmuls when the built-in model samples: float32 (default), int8 or int4 (8/4-bit blocks: faster decoding, sampled log-probs off by a measured tolerance); scoring and training stay float32",
    ),
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

/** The model a run starts from: `--model`, or its alias `--init` (one of them, or both naming the same). */
export function modelSpecOf(options: { model?: string; init?: string }): string | undefined {
  if (options.model !== undefined && options.init !== undefined && options.model !== options.init) {
    throw new InvalidArgumentError(
      `--init is an alias of --model; pass one of them (got --model ${options.model} and --init ${options.init})`,
      { model: options.model, init: options.init },
    );
  }
  return options.model ?? options.init;
}

/** True when `spec` names a model with its own chat format (a GGUF, or a folder whose tokenizer.json is not the byte template's); false when unsure. */
export function hasOwnChatFormat(spec: string | undefined): boolean {
  if (spec === undefined) return false;
  try {
    const source = resolveModelSource(spec);
    if (source.kind === 'gguf') return true;
    const file = join(source.path, 'tokenizer.json');
    return existsSync(file) && !usesByteTemplate(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return false; // the load reports what is wrong with it
  }
}

/** What a run starts from, checked before the run is recorded: the env, its options, the `--model` weights. */
export interface RunSetup {
  descriptor: EnvDescriptor;
  envOptions: Record<string, unknown>;
  init?: LoadedCheckpoint;
}

/**
 * Checks everything a typo can break before a run is created in the store: the env name, its
 * options (by making the env once) and the `--init` checkpoint (loaded here, used by prepareModel).
 */
export async function checkRunSetup(options: {
  env: string;
  envOptions: string;
  model?: string;
  init?: string;
}): Promise<RunSetup> {
  const descriptor = getEnvironment(options.env);
  const envOptions = parseEnvOptions(options.envOptions);
  descriptor.make(envOptions);
  const spec = modelSpecOf(options);
  if (spec === undefined) return { descriptor, envOptions };
  const init = await loadModelCheckpoint(spec);
  checkModelTokenizer(spec, init);
  return { descriptor, envOptions, init };
}

/** A loaded model can be trained in a chat format: it has a tokenizer, the tokenizer fits its vocabulary, and a model's own tokenizer has a template. */
export function checkModelTokenizer(spec: string, { tokenizer, config, chatFormat }: LoadedCheckpoint): void {
  if (tokenizer === undefined) {
    throw new CheckpointError(
      `${spec}: no tokenizer.json; the model's own tokenizer is needed to train it (copy its tokenizer.json, tokenizer_config.json and generation_config.json into the folder)`,
      { model: spec },
    );
  }
  if (tokenizer.vocabSize > config.vocabSize) {
    throw new CheckpointError(
      `${spec}: the tokenizer has ${tokenizer.vocabSize} ids but the model's vocabulary only ${config.vocabSize}: tokenizer.json is not this model's`,
      { model: spec, tokenizerVocabSize: tokenizer.vocabSize, vocabSize: config.vocabSize },
    );
  }
  // A model's own tokenizer has no byte-template role tokens (src/chat/tokenizer-json.ts maps them all to its end token).
  if (chatFormat === undefined && tokenizer.specialTokens.user === tokenizer.specialTokens.end) {
    throw new ChatTemplateError(
      `${spec}: the model's tokenizer comes without a chat template (tokenizer_config.json "chat_template" or chat_template.jinja); add the model's template to train it in its own format`,
      { model: spec },
    );
  }
}

/**
 * Resumable weights (`stateConfig`, a run's saved state) restore only onto the model they were
 * trained from: a LoRA state onto its base, a full fine-tune with that model's tokenizer. Another
 * model at `spec` (another --model, or the file at that path replaced) is refused naming both.
 */
export function checkSameModel(spec: string, modelConfig: ModelConfig, stateConfig: ModelConfig): void {
  if (sameModel(modelConfig, stateConfig)) return;
  const expected = describeModel(stateConfig);
  const actual = describeModel(modelConfig);
  throw new ModelMismatchError(
    `--model ${spec} is another model than the run's saved weights: the run was trained from a ${expected}; ${spec} is a ${actual}. ` +
      'Resume with the --model the run started from (agentrl runs keep it in their config), or start a new run from this model',
    { expected, actual, model: spec },
  );
}

export type PrepareModelOptions = z.infer<typeof modelSetupSchema> & {
  seed: number;
  maxTurns: number;
  maxNewTokens: number;
  systemPrompt: boolean;
  /** Absent: the whole conversation (as 'all'). */
  historyTurns?: HistoryTurns;
  envOptions?: Record<string, unknown>;
};

export async function prepareModel(
  options: PrepareModelOptions,
  descriptor: EnvDescriptor,
  {
    valueHead,
    label,
    init,
    lora,
  }: { valueHead: boolean; label: string; init?: LoadedCheckpoint; lora?: LoraConfigInput },
): Promise<TransformerModel> {
  const spec = modelSpecOf(options);
  if (spec !== undefined) {
    const checkpoint = init ?? (await loadModelCheckpoint(spec));
    // A critic starts at zero on top of a checkpoint trained without one.
    const loaded = valueHead ? withZeroValueHead(checkpoint.config, checkpoint.params) : checkpoint;
    const model = await TransformerModel.fromParams(loaded.config, loaded.params, {
      ...(lora === undefined ? {} : { lora, seed: options.seed }),
      baseQuantization: options.baseQuantization,
    });
    console.error(`${label}: ${describeStart(spec, checkpoint, model)}`);
    return model;
  }
  const modelConfig: Record<string, unknown> = { ...defaultTrainModel, valueHead };
  for (const key of Object.keys(modelConfigSchema.shape)) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined && key !== 'valueHead') modelConfig[key] = value;
  }
  const model = await TransformerModel.create(modelConfig, {
    seed: options.seed,
    baseQuantization: options.baseQuantization,
  });
  if (options.warmStart !== false && options.demonstrations > 0 && options.sftSteps > 0) {
    await warmStartPolicy(new BuiltinPolicy({ model }), options, descriptor, label);
    // RL starts with a fresh optimizer: the SFT moments (at a 30-100x larger learning rate) say
    // nothing about the RL gradients. bench:learning starts RL the same way.
    return TransformerModel.fromParams(model.config, await model.hostParams(), {
      baseQuantization: options.baseQuantization,
    });
  }
  return model;
}

/** The SFT warm start on the env's scripted expert, through the contract (no-op with --no-warm-start, or when --demonstrations or --sft-steps is 0). */
export async function warmStartPolicy(
  policy: TrainablePolicy,
  options: PrepareModelOptions,
  descriptor: EnvDescriptor,
  label: string,
): Promise<void> {
  if (options.warmStart === false || options.demonstrations === 0 || options.sftSteps === 0) return;
  const progress = new Progress({ label: 'warm start (sft)', total: options.sftSteps });
  const result = await warmStart({
    policy,
    env: () => descriptor.make(options.envOptions ?? {}),
    expert: (seed, randomActionRate) => descriptor.expert({ seed, randomActionRate }),
    config: options,
    maxTurns: options.maxTurns,
    historyTurns: rolloutHistoryTurns(options.historyTurns ?? 'all'),
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

/** "loaded X in its own chat format …; pure RL …; LoRA …": what the run starts from, for the progress output. */
function describeStart(spec: string, checkpoint: LoadedCheckpoint, model: TransformerModel): string {
  const format =
    checkpoint.chatFormat === undefined
      ? "agentrl's byte template"
      : `its own tokenizer (${checkpoint.tokenizer!.vocabSize} ids) and chat template "${checkpoint.chatFormat.name}"`;
  const parts = [`loaded ${spec} with ${format}`, 'pure RL from these weights (no SFT warm start)'];
  if (model.lora !== null) {
    const adapters = [...loraShapes(model.config, model.lora).values()].reduce(
      (sum, [rows, columns]) => sum + rows! * columns!,
      0,
    );
    const base = [...checkpoint.params.values()].reduce((sum, tensor) => sum + tensor.data.length, 0);
    parts.push(
      `LoRA rank ${model.lora.rank} (alpha ${model.lora.alpha}, dropout ${model.lora.dropout}) on ${model.lora.targetModules.join(',')}: ${adapters.toLocaleString('en-US')} adapter parameters trained, the ${base.toLocaleString('en-US')} base weights frozen`,
    );
  }
  return parts.join('; ');
}
