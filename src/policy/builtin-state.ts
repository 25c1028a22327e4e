/**
 * The built-in model's resumable state as one safetensors blob (what `BuiltinPolicy.saveState`
 * writes and the run store keeps in its checkpoint rows):
 *
 *   params/<name>   the weights              adam.m/<name>, adam.v/<name>   AdamW moments
 *   __metadata__    { format, modelConfig (JSON), optimizerStep, rl (JSON, runs recorded before the resume envelope) }
 *
 * Float32 values round-trip bit for bit, so a restored model continues exactly where it stopped.
 * A model that has taken no optimizer step is saved without moments (it restores to a fresh optimizer).
 *
 * A LoRA model saves its adapters and their moments only (`adapters/<name>`, metadata `lora`), not
 * the frozen base: it restores onto a model of the same base (`loadState`, or `fromState` given
 * the base weights). With a value head it also saves the head it trains (`valueHead/<name>`, its
 * moments among adam.*); an older state without it restores the base's head with fresh moments.
 * A model made with a `baseQuantization` other than float32 saves it (metadata `baseQuantization`),
 * so a resumed run generates on the same quantized base.
 */
import { CheckpointError } from '../core/errors.ts';
import { modelConfigSchema, type HostParams, type ModelConfig } from '../model/config.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { loraConfigSchema, type LoraConfig } from '../model/lora.ts';
import { baseQuantizations, type BaseQuantization } from '../model/model-options.ts';
import { parseSafetensors, serializeSafetensors, toFloat32 } from '../model/safetensors.ts';

export const builtinStateFormat = 'agentrl-trainer-state-1';

export interface BuiltinState {
  modelConfig: ModelConfig;
  /** The weights (empty for a LoRA state: the base is not saved). */
  params: HostParams;
  /** LoRA settings and adapters, for a model that trains adapters. */
  lora?: { config: LoraConfig; adapters: HostParams; valueHead?: HostParams };
  /** The generation base's quantization when not float32 (ModelOptions.baseQuantization). */
  baseQuantization?: BaseQuantization;
  optimizer?: { step: number; m: HostParams; v: HostParams };
  /** The RL trainer state of blobs written before the resume envelope (train/resume-state.ts). */
  rl?: unknown;
}

/** The model's weights (and, with `optimizer`, its AdamW moments and step counter). */
export async function captureBuiltinState(
  model: TransformerModel,
  { optimizer = true }: { optimizer?: boolean } = {},
): Promise<BuiltinState> {
  const moments = optimizer ? await model.optimizerState() : undefined;
  const quantization = model.baseQuantization === 'float32' ? {} : { baseQuantization: model.baseQuantization };
  if (model.lora !== null) {
    const valueHead = await model.valueHeadParams();
    return {
      modelConfig: model.config,
      params: new Map(),
      lora: { config: model.lora, adapters: await model.adapterParams(), ...(valueHead ? { valueHead } : {}) },
      optimizer: moments,
      ...quantization,
    };
  }
  return { modelConfig: model.config, params: await model.hostParams(), optimizer: moments, ...quantization };
}

export function serializeBuiltinState(state: BuiltinState): Uint8Array {
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  const add = (prefix: string, params: HostParams) => {
    for (const [name, tensor] of params) tensors.set(`${prefix}/${name}`, tensor);
  };
  add('params', state.params);
  const metadata: Record<string, string> = {
    format: builtinStateFormat,
    modelConfig: JSON.stringify(state.modelConfig),
  };
  if (state.lora) {
    add('adapters', state.lora.adapters);
    if (state.lora.valueHead) add('valueHead', state.lora.valueHead);
    metadata.lora = JSON.stringify(state.lora.config);
  }
  if (state.baseQuantization !== undefined) metadata.baseQuantization = state.baseQuantization;
  if (state.optimizer) {
    add('adam.m', state.optimizer.m);
    add('adam.v', state.optimizer.v);
    metadata.optimizerStep = String(state.optimizer.step);
  }
  if (state.rl !== undefined) metadata.rl = JSON.stringify(state.rl);
  return serializeSafetensors(tensors, metadata);
}

export function parseBuiltinState(bytes: Uint8Array, { source = '<memory>' }: { source?: string } = {}): BuiltinState {
  const { tensors, metadata } = parseSafetensors(bytes, { file: source });
  if (metadata.format !== builtinStateFormat) {
    throw new CheckpointError(`${source}: not an agentrl trainer state (format ${metadata.format ?? 'missing'})`, {
      source,
    });
  }
  const [params, adapters, valueHead, adamM, adamV]: [HostParams, HostParams, HostParams, HostParams, HostParams] = [
    new Map(),
    new Map(),
    new Map(),
    new Map(),
    new Map(),
  ];
  const groups = new Map([
    ['params', params],
    ['adapters', adapters],
    ['valueHead', valueHead],
    ['adam.m', adamM],
    ['adam.v', adamV],
  ]);
  for (const [key, tensor] of tensors) {
    const slash = key.indexOf('/');
    groups.get(key.slice(0, slash))?.set(key.slice(slash + 1), { shape: tensor.shape, data: toFloat32(tensor) });
  }
  const quantization = metadata.baseQuantization as BaseQuantization | undefined;
  if (quantization !== undefined && !baseQuantizations.includes(quantization))
    throw new CheckpointError(
      `${source}: baseQuantization must be one of ${baseQuantizations.join(', ')}; got ${quantization}`,
      { source },
    );
  const lora =
    metadata.lora === undefined ? undefined : { config: loraConfigSchema.parse(JSON.parse(metadata.lora)), adapters };
  return {
    modelConfig: modelConfigSchema.parse(JSON.parse(metadata.modelConfig!)),
    params,
    lora: lora && valueHead.size > 0 ? { ...lora, valueHead } : lora,
    ...(quantization === undefined ? {} : { baseQuantization: quantization }),
    optimizer:
      metadata.optimizerStep === undefined ? undefined : { step: Number(metadata.optimizerStep), m: adamM, v: adamV },
    rl: metadata.rl === undefined ? undefined : JSON.parse(metadata.rl),
  };
}

/** A model holding the state's weights and, when the state has them, its optimizer moments and step counter. */
export async function restoreBuiltinModel(
  state: BuiltinState,
  { baseParams }: { baseParams?: HostParams } = {},
): Promise<TransformerModel> {
  if (state.lora && baseParams === undefined) {
    throw new CheckpointError(
      'a LoRA state holds the adapters only: restore it onto its base (pass baseParams, or loadState on a policy built on that base)',
      {},
    );
  }
  const { baseQuantization } = state;
  const model = state.lora
    ? await TransformerModel.fromParams(state.modelConfig, baseParams!, {
        lora: state.lora.config,
        adapters: state.lora.adapters,
        baseQuantization,
      })
    : await TransformerModel.fromParams(state.modelConfig, state.params, { baseQuantization });
  if (state.lora?.valueHead) model.setValueHead(state.lora.valueHead);
  if (state.optimizer) model.loadOptimizerState(state.optimizer);
  return model;
}
