/**
 * LoRA dropout masks as graph feeds (model-graph.ts's `{weight}.loraMask` [B, T, in]): drawn on the
 * host by lora.ts's `dropoutMaskData` (0 with probability p, else 1/(1−p): inverted dropout, PEFT's
 * `nn.Dropout` on the adapter input), from a seeded Rng so a run replays exactly; or all ones (no
 * dropout: scoring, and the log-probs a loss reads), one shared buffer per input width.
 */
import { at } from '../../core/indexing.ts';
import type { Rng } from '../../core/rng.ts';
import type { ModelConfig } from '../../model/config.ts';
import { dropoutMaskData, loraShapes, type LoraConfig } from '../../model/lora.ts';
import { loraMaskName } from './model-graph.ts';
import type { Feed } from './session.ts';

/** Masks for a packed run of `rows` × `length` tokens; `rng` null: all ones. Empty without dropout. */
export function dropoutFeeds(
  config: ModelConfig,
  lora: LoraConfig | null,
  rows: number,
  length: number,
  rng: Rng | null,
): Record<string, Feed> {
  const feeds: Record<string, Feed> = {};
  if (lora === null || lora.dropout === 0) return feeds;
  if (rng !== null) {
    for (const [name, mask] of dropoutMaskData(config, lora, rows * length, rng))
      feeds[name] = { dtype: 'float32', shape: [rows, length, at(mask.shape, 1)], data: mask.data };
    return feeds;
  }
  const ones = new Map<number, Float32Array>();
  for (const [name, shape] of loraShapes(config, lora)) {
    if (!name.endsWith('.loraA')) continue;
    const input = at(shape, 0);
    let data = ones.get(input);
    if (data === undefined) {
      data = new Float32Array(rows * length * input).fill(1);
      ones.set(input, data);
    }
    feeds[loraMaskName(name.slice(0, -'.loraA'.length))] = { dtype: 'float32', shape: [rows, length, input], data };
  }
  return feeds;
}
