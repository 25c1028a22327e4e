/**
 * Global-norm clipping and AdamW (Loshchilov & Hutter 2019, "Decoupled Weight Decay
 * Regularization"; PyTorch's torch.optim.AdamW update) on host arrays: the engine's one optimizer
 * (OnnxTrainer's gradients come back to the host, where the weights and moments live).
 *
 *   g ← g · min(1, c / (‖g‖₂ + 1e-6))
 *   m ← β₁m + (1−β₁)g          v ← β₂v + (1−β₂)g²
 *   θ ← θ − lr · ( m/(1−β₁ᵗ) / (sqrt(v/(1−β₂ᵗ)) + ε) + λθ )     (λ on the `decayed` arrays)
 *
 * The norm sums in `names` order (params.ts's canonical order). The moments are updated in place;
 * each trained array is replaced by a new one (its map entry swapped), so a run still reading the
 * old array (onnxruntime feeds are not copied) sees consistent weights.
 */
import type { HostParams } from '../../model/config.ts';
import { InvalidArgumentError } from '../../core/errors.ts';
import { optimDefaults, type OptimOptions } from '../../model/optim-options.ts';

/** The defaults of every optional field (model/optim-options.ts). */
export const hostOptimDefaults = optimDefaults;

/** Refuses options that would silently corrupt the arrays (a NaN learning rate, β outside [0, 1)). */
export function checkOptimOptions(options: OptimOptions): void {
  const { learningRate, maxGradNorm = 0, weightDecay = 0, beta1 = 0.9, beta2 = 0.95, epsilon = 1e-8 } = options;
  const bad = (name: string, value: number, allowed: string) =>
    new InvalidArgumentError(`optimStep: ${name} must be ${allowed}, got ${value}`, { [name]: value });
  if (!(Number.isFinite(learningRate) && learningRate >= 0)) throw bad('learningRate', learningRate, 'finite and ≥ 0');
  if (!(maxGradNorm >= 0 && maxGradNorm < Infinity)) throw bad('maxGradNorm', maxGradNorm, 'finite and ≥ 0 (0 = off)');
  if (!(Number.isFinite(weightDecay) && weightDecay >= 0)) throw bad('weightDecay', weightDecay, 'finite and ≥ 0');
  if (!(beta1 >= 0 && beta1 < 1)) throw bad('beta1', beta1, 'in [0, 1)');
  if (!(beta2 >= 0 && beta2 < 1)) throw bad('beta2', beta2, 'in [0, 1)');
  if (!(epsilon > 0 && epsilon < Infinity)) throw bad('epsilon', epsilon, 'finite and > 0');
}

export interface HostAdamState {
  step: number;
  m: HostParams;
  v: HostParams;
}

/** The data of `name` in a params map (named error when absent). */
function dataOf(params: HostParams, name: string, what: string): Float32Array {
  const tensor = params.get(name);
  if (tensor === undefined) throw new InvalidArgumentError(`AdamW: ${what} has no array ${name}`, { name });
  return tensor.data;
}

export function globalNorm(gradients: HostParams, names: readonly string[]): number {
  let squares = 0;
  for (const name of names) {
    const g = dataOf(gradients, name, 'the gradient');
    let sum = 0;
    // Indexed: a for-of over a typed array ran 5× slower (1M elements: 5.4 vs 1.0 ms).
    for (let i = 0; i < g.length; i++) {
      const gi = g[i] ?? 0;
      sum += gi * gi;
    }
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
  checkOptimOptions(options);
  const lr = options.learningRate;
  state.step += 1;
  const c1 = 1 / (1 - beta1 ** state.step);
  const c2 = 1 / (1 - beta2 ** state.step);
  const norm = globalNorm(gradients, names);
  const scale = Math.min(maxNorm > 0 ? maxNorm / (norm + 1e-6) : Infinity, 1);
  for (const name of names) {
    const old = dataOf(params, name, 'the trained arrays');
    const p = new Float32Array(old.length);
    const g = dataOf(gradients, name, 'the gradient');
    const m = dataOf(state.m, name, 'the first moments');
    const v = dataOf(state.v, name, 'the second moments');
    const decay = decayed.has(name) ? weightDecay : 0;
    if (g.length !== p.length || m.length !== p.length || v.length !== p.length)
      throw new InvalidArgumentError(`AdamW: the arrays of ${name} differ in length`, {
        name,
        lengths: [p.length, g.length, m.length, v.length],
      });
    // Lengths checked once above: the reads below are in bounds (`?? 0` only satisfies the type).
    // The moments are rounded to float32 as stored before the update reads them, as before.
    for (let i = 0; i < p.length; i++) {
      const gi = (g[i] ?? 0) * scale;
      const mi = Math.fround(beta1 * (m[i] ?? 0) + (1 - beta1) * gi);
      const vi = Math.fround(beta2 * (v[i] ?? 0) + (1 - beta2) * gi * gi);
      m[i] = mi;
      v[i] = vi;
      const theta = old[i] ?? 0;
      p[i] = theta - lr * ((mi * c1) / (Math.sqrt(vi * c2) + epsilon) + decay * theta);
    }
    params.set(name, { shape: params.get(name)?.shape ?? [p.length], data: p });
  }
  return norm;
}
