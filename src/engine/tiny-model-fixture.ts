/**
 * The tiny random model the engine tests share (each test seeds its own weights): 40 token ids,
 * 2 layers of width 16, 4 query heads over 2 KV heads (grouped-query attention), context 64,
 * init std 0.2 (wide enough that sampled rows differ between seeds). Tests that need a shorter
 * context spread it (`{ ...tinyModelConfig, maxSeqLen: 32 }`).
 */
import type { ModelConfigInput } from '../model/config.ts';
import type { LoraConfigInput } from '../model/lora.ts';

/** The shared tiny model config (see the header); frozen, so no test changes it for another. */
export const tinyModelConfig: Readonly<ModelConfigInput> = Object.freeze({
  vocabSize: 40,
  hiddenSize: 16,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  intermediateSize: 32,
  maxSeqLen: 64,
  initStd: 0.2,
});

/** The shared LoRA setting on `tinyModelConfig`: rank 4, alpha 8 (scale 2), no dropout; frozen. */
export const tinyLoraConfig: Readonly<LoraConfigInput> = Object.freeze({ rank: 4, alpha: 8 });
