/**
 * Test support: checks the gradients addGradients (autodiff.ts) emits against central finite
 * differences, both run through onnxruntime. The checked function is y = build(inputs); the loss
 * is Σ y · w for a seeded random cotangent w, so every element of the vector-Jacobian product is
 * exercised. Float32 throughout: a step of 1e-2 keeps the truncation and rounding errors ~1e-4.
 */
import assert from 'node:assert/strict';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at, entry } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { addGradients } from './autodiff.ts';
import { Graph, type Dim, type TensorData, type ValueId } from './graph.ts';
import { GraphBuilder } from './ops.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession, type Feed } from './session.ts';

export interface CheckedInput {
  name: string;
  shape: number[];
  /** The shape the graph declares (symbolic sizes allowed); default `shape`. */
  declared?: Dim[];
  /** Differentiated unless false (then fed as is: a frozen float input). */
  differentiate?: boolean;
  /** Draw from [0.5, 1.5] instead of [−1, 1] (logs, square roots, divisors). */
  positive?: boolean;
  data?: Float32Array;
}

export interface IntegerInput {
  name: string;
  dtype: 'int32' | 'int64' | 'bool';
  shape: number[];
  data: number[];
}

export interface GradientCase {
  inputs: CheckedInput[];
  integers?: IntegerInput[];
  build: (g: GraphBuilder, values: Record<string, ValueId>) => ValueId;
  /** y's run-time shape, when the graph only knows it symbolically. */
  outputShape?: number[];
}

function integerFeed(input: IntegerInput): Feed {
  const data =
    input.dtype === 'int64'
      ? BigInt64Array.from(input.data.map(BigInt))
      : input.dtype === 'int32'
        ? Int32Array.from(input.data)
        : (Uint8Array.from(input.data) as unknown as Int32Array);
  return { dtype: input.dtype, shape: input.shape, data };
}

/** Builds the loss graph; returns the session and the seeded input data. */
async function lossSession(spec: GradientCase, rng: Rng) {
  const g = new GraphBuilder(new Graph());
  const values: Record<string, ValueId> = {};
  for (const input of spec.inputs)
    values[input.name] = g.graph.input(input.name, 'float32', input.declared ?? input.shape);
  for (const input of spec.integers ?? []) values[input.name] = g.graph.input(input.name, input.dtype, input.shape);
  const y = spec.build(g, values);
  const outputShape =
    spec.outputShape ??
    g.shape(y).map((d) => {
      if (typeof d !== 'number')
        throw new InvalidArgumentError(`gradient check: y has symbolic shape [${g.shape(y)}]; give outputShape`);
      return d;
    });
  const cotangent = Float32Array.from({ length: outputShape.reduce((n, d) => n * d, 1) }, () => 2 * rng.next() - 1);
  const w = g.graph.initializer('cotangent', { dtype: 'float32', shape: outputShape, data: cotangent as TensorData });
  const product = g.mul(y, w);
  const loss = g.graph.output(
    g.reduceSum(
      product,
      g.shape(product).map((_, i) => i),
      false,
    ),
    'loss',
  );
  const checked = spec.inputs.filter((input) => input.differentiate !== false);
  const gradients = addGradients(
    g,
    loss,
    checked.map((input) => entry(values, input.name, 'gradient-check input')),
  );
  gradients.forEach((gradient, i) => {
    g.graph.output(
      at(g.graph.node('Identity', [gradient], {}, [{ dtype: 'float32', shape: g.shape(gradient) }]), 0),
      `grad.${at(checked, i).name}`,
    );
  });
  const session = await OnnxSession.create(serializeModel(g.graph), { threads: 1 });
  const data = new Map(
    spec.inputs.map((input) => [
      input.name,
      input.data ??
        Float32Array.from({ length: input.shape.reduce((n, d) => n * d, 1) }, () =>
          input.positive ? 0.5 + rng.next() : 2 * rng.next() - 1,
        ),
    ]),
  );
  return { session, data, checked, graph: g.graph };
}

/**
 * Asserts every gradient element within `atol + rtol·|analytic|` of its central difference.
 * Returns the graph (for structural assertions).
 */
export async function assertGradientsMatch(
  label: string,
  spec: GradientCase,
  { seed = 1, step = 1e-2, atol = 2e-3, rtol = 1e-2 } = {},
): Promise<Graph> {
  const rng = new Rng(seed);
  const { session, data, checked, graph } = await lossSession(spec, rng);
  const feeds = (): Record<string, Feed> => {
    const out: Record<string, Feed> = {};
    for (const input of spec.inputs)
      out[input.name] = { dtype: 'float32', shape: input.shape, data: data.get(input.name)! };
    for (const input of spec.integers ?? []) out[input.name] = integerFeed(input);
    return out;
  };
  const analytic = await session.run(feeds());
  const lossAt = async () =>
    at(entry(await session.run(feeds(), ['loss']), 'loss', 'run output').data as Float32Array, 0);
  for (const input of checked) {
    const x = data.get(input.name)!;
    const gradient = entry(analytic, `grad.${input.name}`, 'run output');
    assert.deepEqual(gradient.shape, input.shape, `${label}: ∂${input.name} shape`);
    for (let i = 0; i < x.length; i++) {
      const saved = at(x, i);
      x[i] = saved + step;
      const plus = await lossAt();
      x[i] = saved - step;
      const minus = await lossAt();
      x[i] = saved;
      const numeric = (plus - minus) / (2 * step);
      const value = gradient.data[i] as number;
      assert.ok(
        Math.abs(numeric - value) <= atol + rtol * Math.abs(value),
        `${label}: ∂${input.name}[${i}] analytic ${value} vs numeric ${numeric}`,
      );
    }
  }
  await session.release();
  return graph;
}
