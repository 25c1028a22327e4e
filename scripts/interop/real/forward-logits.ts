/** check:real: logits of the built-in forward (the one score/train use) on padded rows, float32. */
import { initJax, numpy as np } from '../../../src/model/jax.ts';
import { headDim, type HostParams, type ModelConfig } from '../../../src/model/config.ts';
import { toDevice } from '../../../src/model/params.ts';
import { ropeTables } from '../../../src/model/rope.ts';
import { hiddenStates, lmLogits } from '../../../src/model/transformer.ts';

/** logits [B·T, V] of `tokens` [B·T] (`keyMask` 1 on real tokens). */
export async function forwardLogits(
  config: ModelConfig,
  params: HostParams,
  tokens: Int32Array,
  keyMask: Float32Array,
  B: number,
  T: number,
): Promise<Float32Array> {
  await initJax();
  const half = headDim(config) / 2;
  const { cos, sin } = ropeTables(
    Int32Array.from({ length: T }, (_, i) => i),
    headDim(config),
    config.ropeTheta,
  );
  const device = toDevice(config, params);
  const h = hiddenStates(
    device,
    config,
    np.array(tokens),
    np.array(keyMask).reshape([B, T]),
    np.array(cos).reshape([1, 1, T, half]),
    np.array(sin).reshape([1, 1, T, half]),
    B,
    T,
  );
  return (await lmLogits(device, config, h).data()) as Float32Array;
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
