/**
 * `npm run bench:real-memory`: the memory a LoRA RL step of a SmolLM2-135M-shaped model takes on
 * the engine (issue 28's target: bench:real's whole run ≤ 4 GB). Random weights of the real shape (vocab 49,152, hidden 576, 30 layers, 9 query /
 * 3 KV heads, SwiGLU 1,536, tied embeddings), LoRA rank 16 on the attention and MLP projections.
 *
 *   1. score 16 × 256 tokens (the RL trainer's old/current log-probs);
 *   2. one PPO-clip step on 8 × 256 tokens: a scoring pass for the ratio, then forward + backward
 *      in micro-batches (gradients accumulated) and AdamW on the adapters;
 *   3. one forward + backward of a single 256-token row (a loss that needs no scoring pass): the
 *      training cost per 256 tokens, which with the scoring rate sets the RL iteration budget.
 *
 * Prints the time of each phase and the peak RSS (process.resourceUsage().maxRSS). Env:
 * BENCH_LAYERS (default 30) for a shorter model while bisecting.
 */
import { Rng } from '../src/core/rng.ts';
import { rlLoss, sftLoss } from '../src/algorithms/rl-loss.ts';
import { TransformerModel } from '../src/engine/transformer-model.ts';

const smolLm2Shape = {
  vocabSize: 49152,
  hiddenSize: 576,
  numLayers: Number(process.env.BENCH_LAYERS ?? 30),
  numHeads: 9,
  numKvHeads: 3,
  intermediateSize: 1536,
  maxSeqLen: 256,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: true,
};
const lora = {
  rank: 16,
  alpha: 32,
  targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const,
};
const trainRows = 8;
const scoreRows = 16;
const length = 256;

function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024; // maxRSS is in KB
}

function randomSequences(rng: Rng, rows: number): number[][] {
  return Array.from({ length: rows }, () => Array.from({ length }, () => rng.int(smolLm2Shape.vocabSize)));
}

async function timed<T>(label: string, run: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await run();
  console.log(`${label}: ${((performance.now() - start) / 1000).toFixed(1)} s, peak RSS ${peakRssMb().toFixed(0)} MB`);
  return result;
}

const rng = new Rng(0);
console.log(
  `SmolLM2-135M shape (${smolLm2Shape.numLayers} layers), random weights, LoRA rank ${lora.rank} (${lora.targetModules.join(', ')})`,
);
const model = await timed('create', () =>
  TransformerModel.create(smolLm2Shape, { seed: 0, lora: { ...lora, targetModules: [...lora.targetModules] } }),
);
console.log(`tokens per run: train ${model.trainTokenBudget}, score ${model.scoreTokenBudget}`);

const scoring = randomSequences(rng, scoreRows);
const scoreStart = performance.now();
await timed(`score ${scoreRows} × ${length}`, () => model.score(scoring));
console.log(`scoring: ${((scoreRows * length) / ((performance.now() - scoreStart) / 1000)).toFixed(0)} tokens/s`);

const batch = randomSequences(rng, trainRows);
const old = await timed(`old log-probs ${trainRows} × ${length}`, () => model.score(batch));
const lossMask = batch.map((row) => Float32Array.from(row, (_, t) => (t < length / 2 ? 0 : 1)));
const advantages = batch.map((row, i) => Float32Array.from(row, () => (i % 2 === 0 ? 1 : -1)));
const loss = rlLoss({ oldLogprobs: old.logprobs, advantages, lossMask });
const report = await timed(`LoRA PPO-clip step ${trainRows} × ${length} (micro-batched)`, () =>
  model.trainStep(batch, loss, { learningRate: 1e-4 }),
);
console.log(`loss ${report.loss.toFixed(4)}, grad norm ${report.gradNorm.toFixed(4)}, ${report.tokens} trained tokens`);

// The first call of a shape compiles; the second is the steady cost of one 256-token row.
const row = randomSequences(rng, 1);
const rowLoss = sftLoss(row.map((sequence) => Float32Array.from(sequence, () => 1)));
await timed(`LoRA forward + backward 1 × ${length} (first: compiles)`, () => model.forwardBackward(row, rowLoss));
model.zeroGradients();
await timed(`LoRA forward + backward 1 × ${length} (the training cost per ${length} tokens)`, () =>
  model.forwardBackward(row, rowLoss),
);
model.zeroGradients();
console.log(`peak RSS ${peakRssMb().toFixed(0)} MB`);
