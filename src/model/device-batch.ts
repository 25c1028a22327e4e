/**
 * Device inputs of a right-padded batch (batch.ts) for the compiled forward and backward: ids,
 * next-token targets, key mask, the RoPE tables of positions 0…T−1 (cached per length) and the
 * inverse temperature.
 */
import { numpy as np } from './jax.ts';
import { headDim, type ModelConfig } from './config.ts';
import type { PackedBatch } from './batch.ts';
import type { DeviceBatch } from './layerwise-backward.ts';
import { ropeTables } from './rope.ts';

export class DeviceBatches {
  private readonly ropeByLength = new Map<number, { cos: Float32Array; sin: Float32Array }>();

  constructor(private readonly config: ModelConfig) {}

  /** New device arrays for `packed`, logits to be divided by `temperature`. */
  of(packed: PackedBatch, temperature: number): DeviceBatch {
    const { cos, sin } = this.ropeFor(packed.seqLen);
    const half = headDim(this.config) / 2;
    return {
      tokens: np.array(packed.tokens),
      targets: np.array(packed.targets),
      keyMask: np.array(packed.keyMask).reshape([packed.batch, packed.seqLen]),
      cos: np.array(cos).reshape([1, 1, packed.seqLen, half]),
      sin: np.array(sin).reshape([1, 1, packed.seqLen, half]),
      invTemperature: np.array(new Float32Array([1 / temperature])),
    };
  }

  private ropeFor(seqLen: number): { cos: Float32Array; sin: Float32Array } {
    let tables = this.ropeByLength.get(seqLen);
    if (tables === undefined) {
      const positions = Int32Array.from({ length: seqLen }, (_, i) => i);
      tables = ropeTables(positions, headDim(this.config), this.config.ropeTheta);
      this.ropeByLength.set(seqLen, tables);
    }
    return tables;
  }
}
