/**
 * The optimizer's options (AdamW with global-norm clipping, Loshchilov & Hutter 2019), as
 * `TrainablePolicy.optimStep` and the engine's optimizer take them; engine-neutral.
 */

export interface OptimOptions {
  learningRate: number;
  /** Clip the global gradient norm to this (0 = no clipping). */
  maxGradNorm?: number;
  weightDecay?: number;
  beta1?: number;
  beta2?: number;
  epsilon?: number;
}

/** The value each optional field takes when it is absent. */
export const optimDefaults = { maxGradNorm: 1.0, weightDecay: 0.0, beta1: 0.9, beta2: 0.95, epsilon: 1e-8 } as const;
