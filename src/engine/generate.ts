/**
 * Batched sampling from a `TransformerModel` (transformer-model.ts): prompts of token ids in, per
 * row the sampled ids, their log-probs under the temperature-scaled distribution (what
 * `model.score(…, { temperature })` returns for them) and the decoded text. Runs on the model's
 * onnxruntime generation session (onnx/onnx-inference.ts → onnx-generate.ts: a KV cache, one
 * run per decoded token for the whole batch; sampler and seeded RNG order in model/row-sampler.ts).
 *
 *   const rows = await generate(model, [[1, 2, 3]], { maxNewTokens: 16, temperature: 0.8, seed: 1 });
 */
import type { GeneratedRow, GenerateOptions } from '../model/generate-options.ts';
import type { TransformerModel } from './transformer-model.ts';

export type { GeneratedRow, GenerateOptions } from '../model/generate-options.ts';

export async function generate(
  model: TransformerModel,
  prompts: readonly (readonly number[])[],
  options: GenerateOptions,
): Promise<GeneratedRow[]> {
  if (prompts.length === 0) return [];
  return (await model.inferenceSession()).generate(prompts, options);
}
