/**
 * What bench:engine's children run on: the weight kinds, SmolLM2-135M's shape, the tiny reference
 * GPT and the seeded token rows. No import from src: a baseline child (BENCH_BASELINE_DIR, an
 * older checkout) loads this file over that checkout's src.
 */
export const weightKinds = ['real', 'random'] as const;
export type WeightKind = (typeof weightKinds)[number];

/** SmolLM2-135M's shape (its config.json), for random weights and for the peers. */
export const smolShape = {
  vocab: 49152,
  hidden: 576,
  layers: 30,
  heads: 9,
  kv_heads: 3,
  intermediate: 1536,
  context: 2048,
  rope_theta: 100000,
  rms_eps: 1e-5,
};

/** The same shape as an agentrl model config. */
export const smolModelConfig = {
  vocabSize: smolShape.vocab,
  hiddenSize: smolShape.hidden,
  numLayers: smolShape.layers,
  numHeads: smolShape.heads,
  numKvHeads: smolShape.kv_heads,
  intermediateSize: smolShape.intermediate,
  maxSeqLen: smolShape.context,
  ropeTheta: smolShape.rope_theta,
  rmsNormEps: smolShape.rms_eps,
};

/** The tiny reference GPT of the first table: its shape and work. */
export const tinyReference = {
  vocab: 64,
  hidden: 128,
  layers: 4,
  heads: 4,
  intermediate: 512,
  context: 128,
  batch: 16,
};
export const tinyGeneration = { batch: 16, prompt: 16, newTokens: 64 };

/** A seeded linear-congruential token stream (the same in every child and every language). */
export function tokenStream(vocab: number, seed = 12345): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % vocab;
  };
}

/** `rows` × `length` tokens from the seeded stream. */
export function tokenRows(rows: number, length: number, vocab: number, seed = 12345): number[][] {
  const next = tokenStream(vocab, seed);
  return Array.from({ length: rows }, () => Array.from({ length }, next));
}
