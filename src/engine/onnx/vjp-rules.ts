/**
 * Gradient rules (vector-Jacobian products) of the arithmetic ops: elementwise, reductions,
 * softmax and the matrix products. Each takes the forward node and ∂loss/∂outputs and emits
 * ∂loss/∂inputs as new nodes; broadcasting inputs sum their gradient back to their own shape.
 *
 *   y = a + b:  ∂a = ∂y, ∂b = ∂y          y = a · b:  ∂a = ∂y · b, ∂b = ∂y · a
 *   y = a / b:  ∂a = ∂y / b, ∂b = −∂y · y / b
 *   y = aᵇ:     ∂a = ∂y · b · aᵇ⁻¹, ∂b = ∂y · y · ln a
 *   y = eˣ: ∂x = ∂y · y    y = ln x: ∂x = ∂y / x    y = √x: ∂x = ∂y / 2y    y = 1/x: ∂x = −∂y · y²
 *   y = σ(x): ∂x = ∂y · y (1 − y)
 *   y = softmax(x): ∂x = y (∂y − Σ ∂y · y)        y = log_softmax(x): ∂x = ∂y − eʸ Σ ∂y
 *   y = logsumexp(x): ∂x = ∂y · e^(x − y)        y = max(x): ∂x = ∂y · [x = y] / #ties
 *   Y = A B:   ∂A = ∂Y Bᵀ, ∂B = Aᵀ ∂Y (batch axes summed back where an operand broadcast)
 */
import { at } from '../../core/indexing.ts';
import { attr, type ValueId } from './graph.ts';
import type { GraphBuilder } from './ops.ts';
import type { VjpRule } from './autodiff.ts';
import {
  expandLike,
  floatAttribute,
  forInput,
  gradientOf,
  input,
  intAttribute,
  keptDims,
  output,
  rawNode,
  reducedAxes,
  sumToShape,
} from './vjp-helpers.ts';

/** A rule for a unary op: ∂x from (∂y, x, y). */
function unary(derivative: (g: GraphBuilder, dy: ValueId, x: ValueId, y: ValueId) => ValueId): VjpRule {
  return (g, node, gradients) => [derivative(g, gradientOf(gradients), input(node, 0), output(node))];
}

const add: VjpRule = (g, node, gradients, needs) => {
  const dy = gradientOf(gradients);
  return [
    needs[0] ? forInput(g, dy, input(node, 0)) : undefined,
    needs[1] ? forInput(g, dy, input(node, 1)) : undefined,
  ];
};

const sub: VjpRule = (g, node, gradients, needs) => {
  const dy = gradientOf(gradients);
  return [
    needs[0] ? forInput(g, dy, input(node, 0)) : undefined,
    needs[1] ? forInput(g, g.neg(dy), input(node, 1)) : undefined,
  ];
};

const mul: VjpRule = (g, node, gradients, needs) => {
  const dy = gradientOf(gradients);
  const [a, b] = [input(node, 0), input(node, 1)];
  return [needs[0] ? forInput(g, g.mul(dy, b), a) : undefined, needs[1] ? forInput(g, g.mul(dy, a), b) : undefined];
};

const div: VjpRule = (g, node, gradients, needs) => {
  const dy = gradientOf(gradients);
  const [a, b] = [input(node, 0), input(node, 1)];
  return [
    needs[0] ? forInput(g, g.div(dy, b), a) : undefined,
    needs[1] ? forInput(g, g.neg(g.div(g.mul(dy, output(node)), b)), b) : undefined,
  ];
};

/** The value of a one-element float32 constant (an initializer), else null. */
function constantScalar(g: GraphBuilder, id: ValueId): number | null {
  const tensor = g.graph.initializers.get(id);
  return tensor?.data instanceof Float32Array && tensor.data.length === 1 ? Number(tensor.data[0]) : null;
}

/** b · aᵇ⁻¹; for a constant b = 2 (RMSNorm's x²) 2a, without ORT's generic Pow (10 ns an element). */
function powDerivative(g: GraphBuilder, a: ValueId, b: ValueId): ValueId {
  const exponent = constantScalar(g, b);
  if (exponent === 2) return g.mul(a, b);
  return g.mul(b, g.pow(a, exponent === null ? g.sub(b, g.scalar(1)) : g.scalar(exponent - 1)));
}

const pow: VjpRule = (g, node, gradients, needs) => {
  const dy = gradientOf(gradients);
  const [a, b] = [input(node, 0), input(node, 1)];
  const da = needs[0] ? forInput(g, g.mul(dy, powDerivative(g, a, b)), a) : undefined;
  const db = needs[1] ? forInput(g, g.mul(dy, g.mul(output(node), g.log(a))), b) : undefined;
  return [da, db];
};

const where: VjpRule = (g, node, gradients, needs) => {
  const dy = gradientOf(gradients);
  const [condition, a, b] = [input(node, 0), input(node, 1), input(node, 2)];
  const zero = g.scalar(0);
  return [
    undefined,
    needs[1] ? forInput(g, g.where(condition, dy, zero), a) : undefined,
    needs[2] ? forInput(g, g.where(condition, zero, dy), b) : undefined,
  ];
};

const cast: VjpRule = (g, node, gradients) => [
  g.dtype(input(node, 0)) === 'float32' ? gradientOf(gradients) : undefined,
];

// reductions ---------------------------------------------------------------------------------------

const reduceSum: VjpRule = (g, node, gradients) => [
  expandLike(g, keptDims(g, node, gradientOf(gradients)), input(node, 0)),
];

const reduceMean: VjpRule = (g, node, gradients) => {
  const x = input(node, 0);
  const count = g.div(
    g.cast(rawNode(g, 'Size', [x], 'int64', []), 'float32'),
    g.cast(rawNode(g, 'Size', [output(node)], 'int64', []), 'float32'),
  );
  return [expandLike(g, g.div(keptDims(g, node, gradientOf(gradients)), count), x)];
};

const reduceLogSumExp: VjpRule = (g, node, gradients) => {
  const x = input(node, 0);
  return [g.mul(keptDims(g, node, gradientOf(gradients)), g.exp(g.sub(x, keptDims(g, node, output(node)))))];
};

/** Ties share the gradient equally (PyTorch's amax convention). */
const reduceMax: VjpRule = (g, node, gradients) => {
  const x = input(node, 0);
  const mask = g.cast(g.equal(x, keptDims(g, node, output(node))), 'float32');
  const ties = g.reduceSum(mask, reducedAxes(g, node), true);
  return [g.mul(mask, g.div(keptDims(g, node, gradientOf(gradients)), ties))];
};

const softmax: VjpRule = (g, node, gradients) => {
  const dy = gradientOf(gradients);
  const y = output(node);
  const axis = intAttribute(node, 'axis', -1);
  return [g.mul(y, g.sub(dy, g.reduceSum(g.mul(dy, y), [axis], true)))];
};

const logSoftmax: VjpRule = (g, node, gradients) => {
  const dy = gradientOf(gradients);
  const axis = intAttribute(node, 'axis', -1);
  return [g.sub(dy, g.mul(g.exp(output(node)), g.reduceSum(dy, [axis], true)))];
};

// matrix products ------------------------------------------------------------------------------------

/** x with its last two axes swapped. */
function swapLast(g: GraphBuilder, x: ValueId): ValueId {
  const rank = g.shape(x).length;
  const perm = Array.from({ length: rank }, (_, i) => i);
  [perm[rank - 2], perm[rank - 1]] = [rank - 1, rank - 2];
  return g.transpose(x, perm);
}

/** [..., k] → [N, k] (k must be a known size). */
function toMatrix(g: GraphBuilder, x: ValueId): ValueId {
  const shape = g.shape(x);
  const last = at(shape, shape.length - 1, 'shape');
  return typeof last === 'number'
    ? g.reshape(x, [-1, last])
    : rawNode(g, 'Flatten', [x], g.dtype(x), ['N', last], { axis: attr.int(shape.length - 1) });
}

const matMul: VjpRule = (g, node, gradients, needs) => {
  const dy = gradientOf(gradients);
  const [a, b] = [input(node, 0), input(node, 1)];
  const rankA = g.shape(a).length;
  const rankB = g.shape(b).length;
  if (rankB === 2) {
    // x [..., k] · W [k, m]: ∂W sums over every row of x.
    const da = needs[0]
      ? rankA === 2
        ? g.gemm(dy, b, { transB: true })
        : g.matMul(dy, g.transpose(b, [1, 0]))
      : undefined;
    const db = needs[1] ? g.gemm(toMatrix(g, a), toMatrix(g, dy), { transA: true }) : undefined;
    return [da, db];
  }
  const da = needs[0] ? sumToShape(g, g.matMul(dy, swapLast(g, b)), g.shape(a)) : undefined;
  const db = needs[1] ? sumToShape(g, g.matMul(swapLast(g, a), dy), g.shape(b)) : undefined;
  return [da, db];
};

/** alpha · op(A) op(B), op = transpose where transA / transB is set. */
function gemmNode(g: GraphBuilder, a: ValueId, b: ValueId, transA: boolean, transB: boolean, alpha: number): ValueId {
  const product = g.gemm(a, b, { transA, transB });
  return alpha === 1 ? product : g.mul(product, g.scalar(alpha));
}

const gemm: VjpRule = (g, node, gradients, needs) => {
  const dy = gradientOf(gradients);
  const [a, b] = [input(node, 0), input(node, 1)];
  const transA = intAttribute(node, 'transA', 0) === 1;
  const transB = intAttribute(node, 'transB', 0) === 1;
  const alpha = floatAttribute(node, 'alpha', 1);
  const beta = floatAttribute(node, 'beta', 1);
  // ∂op(A) = alpha ∂Y op(B)ᵀ and ∂op(B) = alpha op(A)ᵀ ∂Y, each transposed back where op transposed.
  const da = !needs[0]
    ? undefined
    : transA
      ? gemmNode(g, b, dy, transB, true, alpha)
      : gemmNode(g, dy, b, false, !transB, alpha);
  const db = !needs[1]
    ? undefined
    : transB
      ? gemmNode(g, dy, a, true, transA, alpha)
      : gemmNode(g, a, dy, !transA, false, alpha);
  const c = node.inputs[2];
  const dc = c !== undefined && needs[2] ? forInput(g, beta === 1 ? dy : g.mul(dy, g.scalar(beta)), c) : undefined;
  return [da, db, dc];
};

export const elementwiseRules: Readonly<Record<string, VjpRule>> = {
  Add: add,
  Sub: sub,
  Mul: mul,
  Div: div,
  Pow: pow,
  Where: where,
  Cast: cast,
  Identity: (_g, _node, gradients) => [gradientOf(gradients)],
  Neg: unary((g, dy) => g.neg(dy)),
  Exp: unary((g, dy, _x, y) => g.mul(dy, y)),
  Log: unary((g, dy, x) => g.div(dy, x)),
  Sqrt: unary((g, dy, _x, y) => g.div(g.mul(dy, g.scalar(0.5)), y)),
  Reciprocal: unary((g, dy, _x, y) => g.neg(g.mul(dy, g.mul(y, y)))),
  Sigmoid: unary((g, dy, _x, y) => g.mul(dy, g.mul(y, g.sub(g.scalar(1), y)))),
  Tanh: unary((g, dy, _x, y) => g.mul(dy, g.sub(g.scalar(1), g.mul(y, y)))),
  ReduceSum: reduceSum,
  ReduceMean: reduceMean,
  ReduceLogSumExp: reduceLogSumExp,
  ReduceMax: reduceMax,
  Softmax: softmax,
  LogSoftmax: logSoftmax,
  MatMul: matMul,
  Gemm: gemm,
};
