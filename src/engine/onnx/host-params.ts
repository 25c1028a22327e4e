/**
 * Host arrays by name (HostParams) as the trainer keeps them: copies, zero-filled moments, and the
 * gradient sum of a step's backward runs.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import type { HostParams } from '../../model/config.ts';
import { elementCount } from './graph.ts';

export function copyParams(params: HostParams): HostParams {
  return new Map([...params].map(([name, t]) => [name, { shape: [...t.shape], data: Float32Array.from(t.data) }]));
}

export function zerosOf(shapes: ReadonlyMap<string, number[]>): HostParams {
  return new Map([...shapes].map(([name, shape]) => [name, { shape, data: new Float32Array(elementCount(shape)) }]));
}

/**
 * `sum` + one backward run's gradients, in place; with no sum yet the run's arrays themselves
 * (fresh onnxruntime outputs, owned from here on): a one-run step adds nothing.
 */
export function accumulateGradients(
  sum: HostParams | null,
  gradients: ReadonlyMap<string, Float32Array>,
  shapes: ReadonlyMap<string, number[]>,
): HostParams {
  const result: HostParams = sum ?? new Map();
  for (const [name, shape] of shapes) {
    const part = gradients.get(name);
    if (part === undefined || part.length !== elementCount(shape))
      throw new InvalidArgumentError(`backward run: gradient ${name} does not match the trained array`, { name });
    const total = result.get(name)?.data;
    if (total === undefined) result.set(name, { shape: [...shape], data: part });
    else for (let i = 0; i < total.length; i++) total[i] = (total[i] as number) + (part[i] as number);
  }
  return result;
}
