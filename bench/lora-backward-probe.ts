/**
 * Probe for bisecting the memory of one SmolLM2-shaped training step (bench/real-memory.ts's
 * shape). Env: PROBE_LAYERS (default 2), PROBE_MODULES (comma list of LoRA targets; `none` for a
 * full fine-tune), PROBE_ROWS (1), PROBE_LENGTH (256), PROBE_VOCAB (49152), PROBE_LAYERWISE (1 or 0:
 * back-propagate layer by layer or in one call; default the model's choice), PROBE_STEPS (1).
 * Prints the peak RSS after create and after one training step.
 */
import { Rng } from '../src/core/rng.ts';
import { sftLoss } from '../src/algorithms/rl-loss.ts';
import { TransformerModel } from '../src/model/model.ts';
import { threadCount } from '../src/model/jax.ts';

const layers = Number(process.env.PROBE_LAYERS ?? 2);
const modules = (process.env.PROBE_MODULES ?? 'q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj').split(',');
const rows = Number(process.env.PROBE_ROWS ?? 1);
const length = Number(process.env.PROBE_LENGTH ?? 256);
const vocabSize = Number(process.env.PROBE_VOCAB ?? 49152);
const shape = {
  vocabSize,
  hiddenSize: 576,
  numLayers: layers,
  numHeads: 9,
  numKvHeads: 3,
  intermediateSize: 1536,
  maxSeqLen: length,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: true,
};
const peakMb = () => (process.resourceUsage().maxRSS / 1024).toFixed(0);

const lora = modules[0] === 'none' ? undefined : { rank: 16, alpha: 32, targetModules: modules as any };
const model = await TransformerModel.create(shape, { seed: 0, lora });
if (process.env.PROBE_LAYERWISE !== undefined) model.layerwiseBackward = process.env.PROBE_LAYERWISE === '1';
console.log(
  `layers ${layers}, modules ${modules.join(',')}, ${rows} × ${length}, vocab ${vocabSize}, layerwise ${model.layerwiseBackward}, ${threadCount} thread(s): after create peak ${peakMb()} MB`,
);
const rng = new Rng(0);
const batch = Array.from({ length: rows }, () => Array.from({ length }, () => rng.int(vocabSize)));
const mask = batch.map((row) => Float32Array.from(row, () => 1));
for (let step = 0; step < Number(process.env.PROBE_STEPS ?? 1); step++) {
  const start = performance.now();
  await model.trainStep(batch, sftLoss(mask), { learningRate: 1e-4 });
  console.log(`step ${step}: ${((performance.now() - start) / 1000).toFixed(1)} s, peak ${peakMb()} MB`);
}
