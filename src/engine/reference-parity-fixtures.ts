/**
 * The PyTorch + transformers (+ PEFT) reference fixtures (src/engine/fixtures/*.json, written by
 * `npm run reference:engine`, scripts/reference/engine/record.py): their schema, the weights they
 * were recorded on (rebuilt bit for bit by reference-parity-weights.ts) and the error measures the
 * parity tests compare the engine with.
 *
 * Every recorded quantity holds the float64 value (the exact reference) and float32's error
 * against it (transformers as it runs), so a test can put the engine's error beside PyTorch's.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { CheckpointError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { HostParams } from '../model/config.ts';
import { bitsChecksum, sampleIndices, uniformArray } from './reference-parity-weights.ts';

const generatedArraySchema = z.object({
  name: z.string(),
  shape: z.array(z.number().int().positive()),
  stream: z.number().int().nonnegative(),
  scale: z.number(),
  offset: z.number(),
  /** bitsChecksum of the float32 array the recording used. */
  bitsChecksum: z.number().int().nonnegative(),
});
const rows = z.array(z.array(z.number()));
const arrayRecordSchema = z.object({
  name: z.string(),
  /** ‖x‖₂ of the whole array, float64. */
  norm: z.number(),
  /** Hex of the little-endian float32 bytes of the float64 values at sampleIndices(size), 8 digits each. */
  samples: z.string().regex(/^(?:[0-9a-f]{8})*$/, 'hex of float32 values, 8 digits each'),
  /** PyTorch float32's own errors against float64, in the measures below. */
  fp32: z.object({ normRelativeError: z.number(), sampleRelativeError: z.number() }),
});
const precisions = z.object({ fp64: z.number(), fp32: z.number() });

export const referenceFixtureSchema = z.object({
  model: z.string(),
  /** agentrl's ModelConfig input (config.ts). */
  config: z.record(z.string(), z.unknown()),
  seed: z.number().int(),
  parameters: z.array(generatedArraySchema),
  lora: z.object({ rank: z.number().int(), alpha: z.number(), adapters: z.array(generatedArraySchema) }).optional(),
  sequences: z.array(z.array(z.number().int().nonnegative())),
  /** w_t of the surrogate Σ_t w_t · log π_T(token_t | prefix); w_0 = 0. */
  weights: rows,
  /** e_t: the surrogate's term Σ_t e_t · H_t on the entropies of π_T (value-head model only). */
  entropyWeights: rows.optional(),
  /** u_t: the surrogate's term Σ_t u_t · V_t on the value head (value-head model only). */
  valueWeights: rows.optional(),
  adamw: z.object({
    learningRate: z.number(),
    weightDecay: z.number(),
    maxGradNorm: z.number(),
    beta1: z.number(),
    beta2: z.number(),
    epsilon: z.number(),
  }),
  scores: z.array(
    z.object({
      temperature: z.number(),
      logprobs: z.object({ fp64: rows, fp32: rows }),
      entropies: z.object({ fp64: rows, fp32: rows }),
      /** The value head's outputs, when the model has one. */
      values: z.object({ fp64: rows, fp32: rows }).optional(),
      fp32MaxAbsError: z.object({ logprobs: z.number(), entropies: z.number(), values: z.number().optional() }),
    }),
  ),
  gradients: z.array(
    z.object({
      kind: z.enum(['full', 'lora']),
      temperature: z.number(),
      surrogate: precisions,
      arrays: z.array(arrayRecordSchema),
    }),
  ),
  optimizer: z.array(
    z.object({
      kind: z.enum(['full', 'lora']),
      steps: z.array(z.object({ gradNorm: precisions, changes: z.array(arrayRecordSchema) })),
    }),
  ),
  versions: z.record(z.string(), z.string()),
});
export type ReferenceFixture = z.infer<typeof referenceFixtureSchema>;
export type ArrayRecord = z.infer<typeof arrayRecordSchema>;

/** Reads and checks one fixture file. */
export function loadReferenceFixture(path: string): ReferenceFixture {
  const parsed = referenceFixtureSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success)
    throw new CheckpointError(
      `${path}: not a reference fixture (rerun npm run reference:engine): ${parsed.error.message}`,
      {
        path,
      },
    );
  return parsed.data;
}

/** The generated arrays as host params; a CheckpointError if one differs by a bit from the recording's. */
export function generatedParams(seed: number, arrays: ReferenceFixture['parameters']): HostParams {
  const params: HostParams = new Map();
  for (const spec of arrays) {
    const data = uniformArray(
      seed,
      spec.stream,
      spec.shape.reduce((a, b) => a * b, 1),
      spec,
    );
    const checksum = bitsChecksum(data);
    if (checksum !== spec.bitsChecksum)
      throw new CheckpointError(
        `generated ${spec.name} differs from the recorded weights (checksum ${checksum}, recorded ${spec.bitsChecksum})`,
        { name: spec.name },
      );
    params.set(spec.name, { shape: spec.shape, data });
  }
  return params;
}

/** The float32 values of a record's `samples` (hex of their little-endian bytes, record.py's `encode`). */
export function decodeSamples(hex: string): Float32Array {
  const bytes = Buffer.from(hex, 'hex');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

function norm(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += (values[i] as number) ** 2;
  return Math.sqrt(sum);
}

/**
 * An engine array against a recorded one: |‖x‖ − ‖r‖| / ‖r‖ over the whole array, and
 * ‖x_s − r_s‖ / max(‖r_s‖, 1e-4 ‖r‖) over the sampled elements (record.py's `sample_error`).
 */
export function arrayErrors(
  actual: Float32Array,
  record: ArrayRecord,
): { normRelativeError: number; sampleRelativeError: number } {
  const reference = decodeSamples(record.samples);
  const indices = sampleIndices(actual.length);
  if (indices.length !== reference.length)
    throw new CheckpointError(`${record.name}: ${reference.length} recorded samples, ${indices.length} expected`);
  const difference = indices.map((index, k) => at(actual, index, record.name) - at(reference, k, 'samples'));
  const floor = Math.max(norm(reference), 1e-4 * record.norm, 1e-30);
  return {
    normRelativeError: Math.abs(norm(actual) - record.norm) / Math.max(record.norm, 1e-30),
    sampleRelativeError: norm(difference) / floor,
  };
}

/** max_t |a_t − r_t| over all sequences. */
export function maxAbsError(actual: readonly ArrayLike<number>[], reference: readonly number[][]): number {
  let worst = 0;
  reference.forEach((row, i) => {
    const values = at(actual, i, 'sequences');
    row.forEach((value, t) => {
      worst = Math.max(worst, Math.abs(at(values, t, 'tokens') - value));
    });
  });
  return worst;
}
