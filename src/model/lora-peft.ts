/**
 * LoRA adapters in PEFT's folder layout, which `PeftModel.from_pretrained(base, folder)` loads onto
 * a Hugging Face model (the base as `export-hf` writes it):
 *
 *   adapter_config.json        { peft_type: "LORA", task_type: "CAUSAL_LM", r, lora_alpha, lora_dropout, target_modules, … }
 *   adapter_model.safetensors  base_model.model.model.layers.{i}.self_attn.q_proj.lora_A.weight [r, in]
 *                              base_model.model.model.layers.{i}.self_attn.q_proj.lora_B.weight [out, r]
 *                              (q/k/v/o_proj under self_attn, gate/up/down_proj under mlp)
 *                              base_model.model.v_head.summary.weight [1, D], .bias [1]   (a trained value head:
 *                              modules_to_save ["v_head"], TRL's v_head.summary as hf-config.ts names it)
 *
 * agentrl keeps A [in, r] and B [r, out] (x A B); PEFT's are their transposes (B A x).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError } from '../core/errors.ts';
import type { HostParams, HostTensor } from './config.ts';
import { loraModuleWeights, type LoraConfig, type LoraModule } from './lora.ts';
import { readSafetensors, serializeSafetensors, toFloat32 } from './safetensors.ts';
import { writeFileAtomic } from './checkpoint.ts';
import { transpose2d } from './hf-config.ts';

const attentionModules: ReadonlySet<LoraModule> = new Set(['q_proj', 'k_proj', 'v_proj', 'o_proj']);
const moduleOfWeight = new Map(
  Object.entries(loraModuleWeights).map(([module, weight]) => [weight as string, module as LoraModule]),
);

export interface SaveAdapterOptions {
  lora: LoraConfig;
  /** Adapters as `TransformerModel.adapterParams()` returns them. */
  adapters: HostParams;
  /** The value head trained under LoRA (`TransformerModel.valueHeadParams()`), saved as PEFT's modules_to_save. */
  valueHead?: HostParams;
  /** Written to adapter_config.json: where PEFT users find the base (a hub id or a folder). */
  baseModelNameOrPath?: string;
}

function transpose(tensor: HostTensor): HostTensor {
  const [rows, columns] = tensor.shape as [number, number];
  return { shape: [columns, rows], data: transpose2d(tensor.data, rows, columns) };
}

/** `layers.3.wq.loraA` → `base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight`. */
export function peftKey(name: string): string {
  const [, layer, weight, side] = /^layers\.(\d+)\.(\w+)\.lora([AB])$/.exec(name) ?? [];
  const module = weight === undefined ? undefined : moduleOfWeight.get(weight);
  if (module === undefined) throw new CheckpointError(`not a LoRA adapter name: ${name}`, { name });
  const block = attentionModules.has(module) ? 'self_attn' : 'mlp';
  return `base_model.model.model.layers.${layer}.${block}.${module}.lora_${side}.weight`;
}

/** PEFT's keys of a value head saved as modules_to_save (agentrl name → key, transposed?). */
const valueHeadKeys: ReadonlyMap<string, [string, boolean]> = new Map([
  ['valueHead.w', ['base_model.model.v_head.summary.weight', true]],
  ['valueHead.b', ['base_model.model.v_head.summary.bias', false]],
]);

/** PEFT's tensors: keys from `peftKey`, each the transpose of agentrl's; a value head's under modules_to_save. */
export function toPeftTensors(adapters: HostParams, valueHead?: HostParams): Map<string, HostTensor> {
  const tensors = new Map<string, HostTensor>();
  for (const [name, tensor] of adapters) tensors.set(peftKey(name), transpose(tensor));
  for (const [name, tensor] of valueHead ?? []) {
    const [key, transposed] = valueHeadKeys.get(name) ?? [];
    if (key === undefined) throw new CheckpointError(`not a value head name: ${name}`, { name });
    tensors.set(key, transposed ? transpose(tensor) : { shape: [...tensor.shape], data: tensor.data.slice() });
  }
  return tensors;
}

export function peftAdapterConfig({
  lora,
  baseModelNameOrPath,
  valueHead,
}: Pick<SaveAdapterOptions, 'lora' | 'baseModelNameOrPath' | 'valueHead'>): Record<string, unknown> {
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    r: lora.rank,
    lora_alpha: lora.alpha,
    lora_dropout: lora.dropout,
    target_modules: [...lora.targetModules],
    base_model_name_or_path: baseModelNameOrPath ?? null,
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    use_rslora: false,
    use_dora: false,
    modules_to_save: valueHead === undefined ? null : ['v_head'],
    layers_to_transform: null,
  };
}

/** The PEFT folder's two files as name → content (a checkpoint writes them under `adapter/` in its own atomic save). */
export function adapterFiles(options: SaveAdapterOptions): [string, Uint8Array | string][] {
  return [
    [
      'adapter_model.safetensors',
      serializeSafetensors(toPeftTensors(options.adapters, options.valueHead), { format: 'pt' }),
    ],
    ['adapter_config.json', JSON.stringify(peftAdapterConfig(options), null, 2) + '\n'],
  ];
}

/** Writes adapter_config.json and adapter_model.safetensors into `folder` (created if needed). */
export async function saveAdapter(folder: string, options: SaveAdapterOptions): Promise<void> {
  await mkdir(folder, { recursive: true });
  for (const [name, data] of adapterFiles(options)) await writeFileAtomic(join(folder, name), data);
}

/** Reads a PEFT folder's adapters back to agentrl's names and layout (a saved value head: `loadAdapterFolder`). */
export async function loadAdapterTensors(folder: string): Promise<HostParams> {
  return (await loadAdapterFolder(folder)).adapters;
}

/** Reads a PEFT folder back: the adapters and, when saved (modules_to_save), the value head, in agentrl's names and layout. */
export async function loadAdapterFolder(folder: string): Promise<{ adapters: HostParams; valueHead?: HostParams }> {
  const content = await readSafetensors(join(folder, 'adapter_model.safetensors'));
  const adapters: HostParams = new Map();
  const valueHead: HostParams = new Map();
  for (const [key, tensor] of content.tensors) {
    const head = [...valueHeadKeys].find(([, [headKey]]) => headKey === key);
    if (head !== undefined) {
      const value = { shape: tensor.shape, data: toFloat32(tensor) };
      valueHead.set(head[0], head[1][1] ? transpose(value) : value);
      continue;
    }
    const [, layer, module, side] =
      /^base_model\.model\.model\.layers\.(\d+)\.(?:self_attn|mlp)\.(\w+)\.lora_([AB])\.weight$/.exec(key) ?? [];
    const weight = module === undefined ? undefined : loraModuleWeights[module as LoraModule];
    if (weight === undefined) throw new CheckpointError(`${folder}: unexpected adapter tensor ${key}`, { key });
    const name = `layers.${layer}.${weight}.lora${side}`;
    adapters.set(name, transpose({ shape: tensor.shape, data: toFloat32(tensor) }));
  }
  return valueHead.size === 0 ? { adapters } : { adapters, valueHead };
}
