/**
 * Global-norm gradient clipping and AdamW (Loshchilov & Hutter 2019), traced inside jit.
 *
 *   g ← g · min(1, c / (‖g‖₂ + 1e-6))
 *   m ← β₁m + (1−β₁)g          v ← β₂v + (1−β₂)g²
 *   θ ← θ − lr · ( m/(1−β₁ᵗ) / (sqrt(v/(1−β₂ᵗ)) + ε) + λθ )     (λ only on matrices)
 *
 * The learning rate, bias corrections, clip norm and weight decay arrive as arrays, so changing
 * them never recompiles.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { entry } from '../core/indexing.ts';
import { numpy as np, type JaxArray } from './jax.ts';
import type { DeviceParams } from './transformer.ts';

export interface OptimOptions {
  learningRate: number;
  /** Clip the global gradient norm to this (0 = no clipping). */
  maxGradNorm?: number;
  weightDecay?: number;
  beta1?: number;
  beta2?: number;
  epsilon?: number;
}

export const optimDefaults = { maxGradNorm: 1.0, weightDecay: 0.0, beta1: 0.9, beta2: 0.95, epsilon: 1e-8 } as const;

/** [lr, c1 = 1/(1−β₁ᵗ), c2 = 1/(1−β₂ᵗ), maxNorm (∞ = off), weightDecay, β₁, β₂, ε] */
export function hyperVector(options: OptimOptions, step: number): Float32Array {
  const beta1 = options.beta1 ?? optimDefaults.beta1;
  const beta2 = options.beta2 ?? optimDefaults.beta2;
  const maxNorm = options.maxGradNorm ?? optimDefaults.maxGradNorm;
  return new Float32Array([
    options.learningRate,
    1 / (1 - beta1 ** step),
    1 / (1 - beta2 ** step),
    maxNorm > 0 ? maxNorm : 3.0e38,
    options.weightDecay ?? optimDefaults.weightDecay,
    beta1,
    beta2,
    options.epsilon ?? optimDefaults.epsilon,
  ]);
}

export interface AdamState {
  m: DeviceParams;
  v: DeviceParams;
}

/**
 * Consumes params, state, grads and hyper; returns the new params and state and the pre-clip norm.
 * `names` fixes the order of the global-norm sum and of the outputs (the canonical parameter
 * order, params.ts): float32 addition is not associative, so another order gives another norm.
 */
export function clipAndAdamW(
  params: DeviceParams,
  state: AdamState,
  grads: DeviceParams,
  hyper: JaxArray,
  decayed: ReadonlySet<string>,
  names: readonly string[],
): { params: DeviceParams; state: AdamState; gradNorm: JaxArray } {
  const h = (i: number): JaxArray => hyper.ref.slice([i, i + 1]); // [1]
  let squares: JaxArray | undefined;
  for (const name of names) {
    const s = np.square(entry(grads, name, 'gradient').ref).sum();
    squares = squares === undefined ? s : squares.add(s);
  }
  if (squares === undefined) throw new InvalidArgumentError('clipAndAdamW: no trained arrays to update');
  const gradNorm = np.sqrt(squares); // []
  const scale = np.minimum(np.reciprocal(gradNorm.ref.add(1e-6)).mul(h(3)), 1); // [1]
  const lr = h(0);
  const c1 = h(1);
  const c2 = h(2);
  const weightDecay = h(4);
  const beta1 = h(5);
  const beta2 = h(6);
  const epsilon = h(7);
  hyper.dispose();
  const nextParams: DeviceParams = {};
  const m: DeviceParams = {};
  const v: DeviceParams = {};
  for (const name of names) {
    const g = entry(grads, name, 'gradient').mul(scale.ref);
    const mNew = entry(state.m, name, 'first moment')
      .mul(beta1.ref)
      .add(g.ref.mul(np.subtract(1, beta1.ref)));
    const vNew = entry(state.v, name, 'second moment')
      .mul(beta2.ref)
      .add(np.square(g).mul(np.subtract(1, beta2.ref)));
    let update = mNew.ref.mul(c1.ref).div(np.sqrt(vNew.ref.mul(c2.ref)).add(epsilon.ref));
    const p = entry(params, name, 'trained array');
    if (decayed.has(name)) update = update.add(p.ref.mul(weightDecay.ref));
    nextParams[name] = p.sub(update.mul(lr.ref));
    m[name] = mNew;
    v[name] = vNew;
  }
  for (const a of [scale, lr, c1, c2, weightDecay, beta1, beta2, epsilon]) a.dispose();
  return { params: nextParams, state: { m, v }, gradNorm };
}
