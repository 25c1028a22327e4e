/**
 * Where the time of one training step goes, kernel by kernel. Run single-threaded
 * (AGENTRL_THREADS=1) so each kernel runs inside its dispatch and jax-js's trace times it.
 * Env as bench/lora-backward-probe.ts (PROBE_LAYERS, PROBE_MODULES, PROBE_ROWS, PROBE_LENGTH,
 * PROBE_VOCAB, PROBE_LAYERWISE), PROBE_TOP (kernels listed), PROBE_EXP_CHARS. A first step compiles; the second is traced. Prints the kernels by total time.
 */
import { Rng } from '../src/core/rng.ts';
import { sftLoss } from '../src/algorithms/rl-loss.ts';
import { TransformerModel } from '../src/model/model.ts';
import { profiler } from '@jax-js/jax';

const layers = Number(process.env.PROBE_LAYERS ?? 1);
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
const lora = modules[0] === 'none' ? undefined : { rank: 16, alpha: 32, targetModules: modules as any };
const model = await TransformerModel.create(shape, { seed: 0, lora });
if (process.env.PROBE_LAYERWISE !== undefined) model.layerwiseBackward = process.env.PROBE_LAYERWISE === '1';
const rng = new Rng(0);
const batch = Array.from({ length: rows }, () => Array.from({ length }, () => rng.int(vocabSize)));
const loss = sftLoss(batch.map((row) => Float32Array.from(row, () => 1)));
let start = performance.now();
await model.trainStep(batch, loss, { learningRate: 1e-4 });
console.log(`first step (compiles): ${((performance.now() - start) / 1000).toFixed(1)} s`);
performance.clearMeasures();
profiler.startTrace();
start = performance.now();
await model.trainStep(batch, loss, { learningRate: 1e-4 });
const total = performance.now() - start;
profiler.stopTrace();
const byKernel = new Map<string, { ms: number; count: number }>();
for (const entry of performance.getEntriesByType('measure')) {
  const props = Object.fromEntries(((entry as any).detail?.devtools?.properties ?? []) as [string, string][]);
  const key = `${entry.name} ${props.reduction ?? ''} ${String(props.exp ?? props.inputShapes ?? '').slice(0, Number(process.env.PROBE_EXP_CHARS ?? 160))}`;
  const item = byKernel.get(key) ?? { ms: 0, count: 0 };
  item.ms += entry.duration;
  item.count += 1;
  byKernel.set(key, item);
}
const sorted = [...byKernel].sort((a, b) => b[1].ms - a[1].ms);
const kernelMs = sorted.reduce((sum, [, v]) => sum + v.ms, 0);
console.log(
  `second step: ${(total / 1000).toFixed(2)} s, of which traced kernels ${(kernelMs / 1000).toFixed(2)} s in ${sorted.reduce((s, [, v]) => s + v.count, 0)} dispatches`,
);
for (const [key, { ms, count }] of sorted.slice(0, Number(process.env.PROBE_TOP ?? 25)))
  console.log(`${(ms / 1000).toFixed(3)} s ×${count}  ${key}`);
