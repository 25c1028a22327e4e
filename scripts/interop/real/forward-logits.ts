/** check:real: logits of the engine's forward (the graph score/train/generation run) on padded rows, float32. */
import { InvalidArgumentError } from '../../../src/core/errors.ts';
import type { HostParams, ModelConfig } from '../../../src/model/config.ts';
import { engineLogits } from '../engine-logits.ts';

/** logits [B·T, V] of `tokens` [B·T] (`keyMask` 1 on real tokens, right-padded). */
export async function forwardLogits(
  config: ModelConfig,
  params: HostParams,
  tokens: Int32Array,
  keyMask: Float32Array,
  B: number,
  T: number,
): Promise<Float32Array> {
  const rows = Array.from({ length: B }, (_, b) =>
    Array.from(tokens.subarray(b * T, (b + 1) * T)).filter((_, t) => keyMask[b * T + t] === 1),
  );
  if (Math.max(...rows.map((row) => row.length)) !== T)
    throw new InvalidArgumentError(`forwardLogits: no row fills the width T = ${T} (pad with paddedRows)`, { T });
  return engineLogits(config, params, rows);
}

/** Right-padded rows of `ids`: tokens [B·T], key mask [B·T], B, T. */
export function paddedRows(ids: readonly (readonly number[])[]): {
  tokens: Int32Array;
  keyMask: Float32Array;
  B: number;
  T: number;
} {
  const T = Math.max(...ids.map((row) => row.length));
  const B = ids.length;
  const tokens = new Int32Array(B * T);
  const keyMask = new Float32Array(B * T);
  for (const [b, row] of ids.entries()) {
    for (const [t, id] of row.entries()) {
      tokens[b * T + t] = id;
      keyMask[b * T + t] = 1;
    }
  }
  return { tokens, keyMask, B, T };
}
