/**
 * Global-norm clipping and AdamW on host arrays: the same update as model/adamw.ts (which runs
 * it inside jax-js), for trainers whose gradients come back to the host (the ONNX LoRA trainer).
 *
 *   g ← g · min(1, c / (‖g‖₂ + 1e-6))
 *   m ← β₁m + (1−β₁)g          v ← β₂v + (1−β₂)g²
 *   θ ← θ − lr · ( m/(1−β₁ᵗ) / (sqrt(v/(1−β₂ᵗ)) + ε) + λθ )     (λ on the `decayed` arrays)
 *
 * The norm sums in `names` order, as adamw.ts does. Arrays are updated in place.
 */
import { at } from '../../core/indexing.ts';
import type { HostParams } from '../../model/config.ts';
import type { OptimOptions } from '../../model/adamw.ts';

/** adamw.ts's defaults (repeated so this path does not load the tensor library). */
export const hostOptimDefaults = {
  maxGradNorm: 1.0,
  weightDecay: 0.0,
  beta1: 0.9,
  beta2: 0.95,
  epsilon: 1e-8,
} as const;

export interface HostAdamState {
  step: number;
  m: HostParams;
  v: HostParams;
}

export function globalNorm(gradients: HostParams, names: readonly string[]): number {
  let squares = 0;
  for (const name of names) {
    const g = gradients.get(name)!.data;
    let sum = 0;
    for (const gi of g) sum += gi * gi;
    squares += sum;
  }
  return Math.sqrt(squares);
}

/** One step on `params` (in place); returns the pre-clip gradient norm. */
export function hostClipAndAdamW(
  params: HostParams,
  state: HostAdamState,
  gradients: HostParams,
  options: OptimOptions,
  { names, decayed }: { names: readonly string[]; decayed: ReadonlySet<string> },
): number {
  const beta1 = options.beta1 ?? hostOptimDefaults.beta1;
  const beta2 = options.beta2 ?? hostOptimDefaults.beta2;
  const epsilon = options.epsilon ?? hostOptimDefaults.epsilon;
  const weightDecay = options.weightDecay ?? hostOptimDefaults.weightDecay;
  const maxNorm = options.maxGradNorm ?? hostOptimDefaults.maxGradNorm;
  const lr = options.learningRate;
  state.step += 1;
  const c1 = 1 / (1 - beta1 ** state.step);
  const c2 = 1 / (1 - beta2 ** state.step);
  const norm = globalNorm(gradients, names);
  const scale = Math.min(maxNorm > 0 ? maxNorm / (norm + 1e-6) : Infinity, 1);
  for (const name of names) {
    const p = params.get(name)!.data;
    const g = gradients.get(name)!.data;
    const m = state.m.get(name)!.data;
    const v = state.v.get(name)!.data;
    const decay = decayed.has(name) ? weightDecay : 0;
    for (let i = 0; i < p.length; i++) {
      const gi = at(g, i) * scale;
      m[i] = beta1 * at(m, i) + (1 - beta1) * gi;
      v[i] = beta2 * at(v, i) + (1 - beta2) * gi * gi;
      const update = (at(m, i) * c1) / (Math.sqrt(at(v, i) * c2) + epsilon) + decay * at(p, i);
      p[i] = at(p, i) - lr * update;
    }
  }
  return norm;
}
