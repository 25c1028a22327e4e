/**
 * What the built-in model trains: its weights, or under LoRA (lora.ts) the adapters on frozen
 * weights: the LoRA setup (fresh adapters, dropout seed) and the check of saved AdamW moments.
 */
import type { HostParams, ModelConfig } from './config.ts';
import { checkHostParams } from './params.ts';
import { checkByShapes, initLoraParams, loraConfigSchema, type LoraConfig, type LoraConfigInput } from './lora.ts';

/** LoRA settings with the adapters' host values and the dropout seed. */
export interface LoraSetup {
  config: LoraConfig;
  adapters: HostParams;
  seed: number;
}

/** Fresh LoRA adapters for `input` (null without LoRA). */
export function loraSetup(config: ModelConfig, input: LoraConfigInput | undefined, seed: number): LoraSetup | null {
  if (input === undefined) return null;
  const lora = loraConfigSchema.parse(input);
  // The adapters draw from their own stream, so the base weights equal a model made without LoRA.
  return { config: lora, adapters: initLoraParams(config, lora, seed + 0x10a), seed: seed + 0x10b };
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
