/**
 * What the built-in model trains: its weights, or under LoRA (lora.ts) the adapters on frozen
 * weights. Names, shapes, the decayed set and the AdamW moments of the trained arrays.
 */
import type { HostParams, ModelConfig } from './config.ts';
import { parameterShapes } from './config.ts';
import { numpy as np, type JaxArray } from './jax.ts';
import type { AdamState } from './adamw.ts';
import { checkHostParams, decayedNames, parameterNames, zerosLike } from './params.ts';
import type { DeviceParams } from './transformer.ts';
import {
  checkByShapes,
  initLoraParams,
  loraConfigSchema,
  loraScale,
  loraShapes,
  toDeviceByShapes,
  zerosByShapes,
  type LoraConfig,
  type LoraConfigInput,
} from './lora.ts';

/** LoRA settings with the adapters' host values and the dropout seed. */
export interface LoraSetup {
  config: LoraConfig;
  adapters: HostParams;
  seed: number;
}

export interface TrainedArrays {
  /** Names and shapes of the trained arrays: the weights, or the adapters under LoRA. */
  shapes: Map<string, number[]>;
  /** The canonical order of the trained arrays (params.ts): every trained tree and the global-norm sum use it. */
  names: readonly string[];
  decayed: Set<string>;
  /** The adapters on the device under LoRA, else null. */
  adapters: DeviceParams | null;
  /** α / r as a device scalar under LoRA, else null. */
  loraScale: JaxArray | null;
  adam: AdamState;
}

/** Fresh LoRA adapters for `input` (null without LoRA). */
export function loraSetup(config: ModelConfig, input: LoraConfigInput | undefined, seed: number): LoraSetup | null {
  if (input === undefined) return null;
  const lora = loraConfigSchema.parse(input);
  // The adapters draw from their own stream, so the base weights equal a model made without LoRA.
  return { config: lora, adapters: initLoraParams(config, lora, seed + 0x10a), seed: seed + 0x10b };
}

/** The trained arrays of a model with `config` (the weights themselves are on the device already). */
export function trainedArrays(config: ModelConfig, lora: LoraSetup | null): TrainedArrays {
  if (lora === null) {
    const adam = { m: zerosLike(config), v: zerosLike(config) };
    const shapes = parameterShapes(config);
    return {
      shapes,
      names: parameterNames(config),
      decayed: decayedNames(config),
      adapters: null,
      loraScale: null,
      adam,
    };
  }
  const shapes = loraShapes(config, lora.config);
  checkByShapes(shapes, lora.adapters, 'LoRA adapters');
  const names = [...shapes.keys()];
  const adapters = toDeviceByShapes(shapes, lora.adapters);
  const scale = np.array(new Float32Array([loraScale(lora.config)]));
  return {
    shapes,
    names,
    decayed: new Set(names),
    adapters,
    loraScale: scale,
    adam: { m: zerosByShapes(shapes), v: zerosByShapes(shapes) },
  };
}

/** Checks saved AdamW moments against the trained arrays: the config's weights, or under LoRA the adapters' `shapes`. */
export function checkOptimizerState(
  config: ModelConfig,
  lora: LoraConfig | null,
  shapes: ReadonlyMap<string, number[]>,
  state: { m: HostParams; v: HostParams },
): void {
  if (lora === null) {
    checkHostParams(config, state.m);
    checkHostParams(config, state.v);
  } else {
    checkByShapes(shapes, state.m, 'optimizer state');
    checkByShapes(shapes, state.v, 'optimizer state');
  }
}
