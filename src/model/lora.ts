/**
 * LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models"), laid out as PEFT.
 *
 *   y = x W + (α / r) · dropout(x) A B        W [in, out] frozen;  A [in, r], B [r, out] trained
 *
 * PEFT stores the transposes (lora_A.weight [r, in], lora_B.weight [out, r]) and initialises A
 * kaiming-uniform with a = √5 (bound 1/√in) and B to zeros, so the adapted model starts equal to
 * the base. Merged weights for export are W + (α / r) · A B.
 */
import { z } from 'zod';
import { Rng } from '../core/rng.ts';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { parameterShapes, type HostParams, type HostTensor, type ModelConfig } from './config.ts';

/** PEFT / Hugging Face module names → agentrl's weight names (config.ts). */
export const loraModuleWeights = {
  q_proj: 'wq',
  k_proj: 'wk',
  v_proj: 'wv',
  o_proj: 'wo',
  gate_proj: 'wGate',
  up_proj: 'wUp',
  down_proj: 'wDown',
} as const;
export type LoraModule = keyof typeof loraModuleWeights;
const allModules = Object.keys(loraModuleWeights) as LoraModule[];

export const loraConfigSchema = z.object({
  /** Rank r of the update A B. */
  rank: z.number().int().positive().default(16),
  /** Scale numerator: the update is multiplied by alpha / rank. */
  alpha: z.number().positive().default(32),
  /** Dropout on the adapter input, in training only. */
  dropout: z.number().min(0).lt(1).default(0),
  /** Projections that get adapters (attention and MLP by default). */
  targetModules: z
    .array(z.enum(allModules as [LoraModule, ...LoraModule[]]))
    .nonempty()
    .default(allModules),
});
export type LoraConfig = z.infer<typeof loraConfigSchema>;
export type LoraConfigInput = z.input<typeof loraConfigSchema>;

export function loraScale(lora: LoraConfig): number {
  return lora.alpha / lora.rank;
}

/** Adapter names and shapes, in a stable order: `layers.{i}.{weight}.loraA` [in, r], `.loraB` [r, out]. */
export function loraShapes(config: ModelConfig, lora: LoraConfig): Map<string, number[]> {
  const base = parameterShapes(config);
  const shapes = new Map<string, number[]>();
  for (let i = 0; i < config.numLayers; i++) {
    for (const module of allModules) {
      if (!lora.targetModules.includes(module)) continue;
      const name = `layers.${i}.${loraModuleWeights[module]}`;
      const [input, output] = base.get(name) ?? [];
      if (input === undefined || output === undefined)
        throw new InvalidArgumentError(`LoRA target ${name} is not a weight of this model`, { name });
      shapes.set(`${name}.loraA`, [input, lora.rank]);
      shapes.set(`${name}.loraB`, [lora.rank, output]);
    }
  }
  return shapes;
}

/** PEFT's init: A ~ U(−1/√in, 1/√in) (kaiming_uniform_ with a = √5), B = 0. */
export function initLoraParams(config: ModelConfig, lora: LoraConfig, seed: number): HostParams {
  const rng = new Rng(seed);
  const params: HostParams = new Map();
  for (const [name, shape] of loraShapes(config, lora)) {
    const input = at(shape, 0, 'shape');
    const data = new Float32Array(input * at(shape, 1, 'shape'));
    if (name.endsWith('.loraA')) {
      const bound = 1 / Math.sqrt(input);
      for (let i = 0; i < data.length; i++) data[i] = (2 * rng.next() - 1) * bound;
    }
    params.set(name, { shape, data });
  }
  return params;
}

/** Base weights with W + scale · A B folded in (for export and serving). */
export function mergeLora(base: HostParams, adapters: HostParams, lora: LoraConfig): HostParams {
  const merged = new Map(base);
  const scale = loraScale(lora);
  for (const [name, a] of adapters) {
    if (!name.endsWith('.loraA')) continue;
    const weight = name.slice(0, -'.loraA'.length);
    const b = adapters.get(weight + '.loraB');
    if (b === undefined) throw new InvalidArgumentError(`adapter ${name} has no ${weight}.loraB`, { name });
    const w = base.get(weight);
    if (w === undefined) throw new InvalidArgumentError(`adapter ${name} has no base weight ${weight}`);
    merged.set(weight, { shape: w.shape, data: addLowRank(w, a, b, scale, weight) });
  }
  return merged;
}

/**
 * W + scale · A B for W [in, out], A [in, r], B [r, out], as a new array. Shapes are checked once,
 * so the loop runs on plain typed-array reads (a checked read per element made each SmolLM2 save of
 * a long `agentrl train` run spend about three minutes here).
 */
function addLowRank(w: HostTensor, a: HostTensor, b: HostTensor, scale: number, weight: string): Float32Array {
  const [input, rank] = a.shape as [number, number];
  const output = at(b.shape, 1, 'loraB.shape');
  if (w.data.length !== input * output || a.data.length !== input * rank || b.data.length !== rank * output)
    throw new InvalidArgumentError(
      `adapter of ${weight}: A [${a.shape.join(', ')}] · B [${b.shape.join(', ')}] does not fit the weight [${w.shape.join(', ')}]`,
      { weight },
    );
  const data = w.data.slice();
  const [aData, bData] = [a.data, b.data];
  for (let i = 0; i < input; i++) {
    const row = i * output;
    for (let k = 0; k < rank; k++) {
      const aik = (aData[i * rank + k] as number) * scale;
      if (aik === 0) continue;
      const bRow = k * output;
      for (let j = 0; j < output; j++) data[row + j] = (data[row + j] as number) + aik * (bData[bRow + j] as number);
    }
  }
  return data;
}

/** Checks host tensors against expected names and shapes. */
export function checkByShapes(shapes: ReadonlyMap<string, number[]>, host: HostParams, what: string): void {
  for (const [name, shape] of shapes) {
    const tensor = host.get(name);
    if (tensor === undefined || tensor.shape.join(',') !== shape.join(',')) {
      throw new InvalidArgumentError(
        `${what}: ${name} should have shape [${shape}], got ${tensor === undefined ? 'nothing' : `[${tensor.shape}]`}`,
        { name },
      );
    }
  }
  if (host.size !== shapes.size)
    throw new InvalidArgumentError(`${what}: expected ${shapes.size} tensors, got ${host.size}`);
}

/**
 * Dropout masks for every adapter input of a micro-batch of `tokens` rows, on the host:
 * `{weight}.loraMask` [tokens, in], 0 with probability p, else 1/(1−p) (inverted dropout). Drawn
 * from `rng` in adapter order, so a seed replays exactly.
 */
export function dropoutMaskData(config: ModelConfig, lora: LoraConfig, tokens: number, rng: Rng): HostParams {
  const masks: HostParams = new Map();
  const keep = 1 / (1 - lora.dropout);
  for (const [name, shape] of loraShapes(config, lora)) {
    if (!name.endsWith('.loraA')) continue;
    const input = at(shape, 0, 'shape');
    const data = new Float32Array(tokens * input);
    for (let i = 0; i < data.length; i++) data[i] = rng.next() < lora.dropout ? 0 : keep;
    masks.set(name.slice(0, -'.loraA'.length) + '.loraMask', { shape: [tokens, input], data });
  }
  return masks;
}
