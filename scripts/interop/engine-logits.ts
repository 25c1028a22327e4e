/**
 * The interop checks' view of the engine's forward: logits [B·T, V] at every position of
 * right-padded rows, from the same ONNX model graph that scoring, training and generation run
 * (src/engine/onnx/model-graph.ts), fed the host weights (and LoRA adapters, unmerged).
 */
import { entry } from '../../src/core/indexing.ts';
import { OnnxInference } from '../../src/engine/onnx/onnx-inference.ts';
import { packRows, promptBias, ropeFeeds } from '../../src/engine/onnx/feeds.ts';
import { headDim, type HostParams, type ModelConfig } from '../../src/model/config.ts';
import type { LoraConfig } from '../../src/model/lora.ts';

/** Logits [B·T, V] (row-major, T = the longest row) of `rows`; positions past a row's end read its last real token's context. */
export async function engineLogits(
  config: ModelConfig,
  params: HostParams,
  rows: readonly (readonly number[])[],
  adapted?: { lora: LoraConfig; adapters: HostParams },
): Promise<Float32Array> {
  const inference = await OnnxInference.create({
    config,
    params,
    ...(adapted === undefined ? {} : { lora: adapted.lora, adapters: adapted.adapters }),
  });
  try {
    const packed = packRows(rows, 'right');
    const out = await inference.forward(
      {
        tokens: packed.tokens,
        rows: packed.rows,
        length: packed.length,
        ...ropeFeeds(packed.positions, packed.rows, packed.length, headDim(config), config.ropeTheta),
        bias: promptBias(packed, 1),
        headRows: Int32Array.from({ length: packed.rows * packed.length }, (_, i) => i),
      },
      ['logits'],
    );
    return entry(out, 'logits', 'run output').data as Float32Array;
  } finally {
    await inference.release();
  }
}
