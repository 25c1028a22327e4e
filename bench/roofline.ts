/**
 * The roofline of this machine, measured (bench:engine's first table): the fp32 matmul rate and
 * the memory bandwidth every other figure of the bench is set against (Williams, Waterman and
 * Patterson, "Roofline: an insightful visual performance model", CACM 2009: attainable rate =
 * min(peak FLOP/s, bandwidth × arithmetic intensity)).
 *
 * In a child process at `threads`:
 *   - onnxruntime MatMul of two N × N float32 matrices (N = BENCH_MATMUL_N): 2N³ FLOPs a run;
 *   - onnxruntime Add of two M-float arrays into a third (STREAM's "add"; M from BENCH_STREAM_MB):
 *     3 × 4M bytes moved per Add, eight chained in one graph (the feed's copy amortised);
 *   - a JS memcpy (`TypedArray.set`, one thread): 2 × 4M bytes a run.
 * The PyTorch side (bench/roofline_torch.py) measures its matmul and add the same way.
 */
import type * as Ort from 'onnxruntime-node';
import { Graph } from '../src/engine/onnx/graph.ts';
import { serializeModel } from '../src/engine/onnx/serialize.ts';
import type { Measurement } from './engine-spawn.ts';

export interface RooflineArgs {
  threads: number;
  matmulSize: number;
  streamMegabytes: number;
  reps: number;
}

async function sessionOf(graph: Graph, threads: number): Promise<Ort.InferenceSession> {
  const { InferenceSession } = await import('onnxruntime-node');
  return InferenceSession.create(serializeModel(graph), {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
  });
}

/** Best (shortest) seconds of `reps` runs of `fn`, after one warm-up run. */
async function bestSeconds(reps: number, fn: () => Promise<unknown> | unknown): Promise<number> {
  await fn();
  let best = Infinity;
  for (let rep = 0; rep < reps; rep++) {
    const start = performance.now();
    await fn();
    best = Math.min(best, (performance.now() - start) / 1000);
  }
  return best;
}

function filled(length: number, seed: number): Float32Array {
  const data = new Float32Array(length);
  for (let i = 0; i < length; i++) data[i] = Math.sin(i * 12.9898 + seed) * 0.5;
  return data;
}

/** onnxruntime's float32 MatMul rate on N × N, GFLOPS. */
async function matmulGflops({ threads, matmulSize: n, reps }: RooflineArgs): Promise<number> {
  const { Tensor } = await import('onnxruntime-node');
  const graph = new Graph();
  const a = graph.input('a', 'float32', [n, n]);
  const b = graph.input('b', 'float32', [n, n]);
  const [c] = graph.node('MatMul', [a, b], {}, [{ dtype: 'float32', shape: [n, n] }]);
  graph.output(c ?? a, 'c');
  const session = await sessionOf(graph, threads);
  const feeds = {
    a: new Tensor('float32', filled(n * n, 1), [n, n]),
    b: new Tensor('float32', filled(n * n, 2), [n, n]),
  };
  const seconds = await bestSeconds(reps, () => session.run(feeds));
  await session.release();
  return (2 * n ** 3) / seconds / 1e9;
}

const chainedAdds = 8;

/**
 * onnxruntime's Add over `streamMegabytes`-sized arrays (read 2, write 1), GB/s: a chain of 8 Adds
 * inside one graph ending in a ReduceMax, so the tensors stay in onnxruntime (onnxruntime-node
 * copies a large feed or fetch at only a few GB/s, which a single Add would time instead).
 */
async function addBandwidth({ threads, streamMegabytes, reps }: RooflineArgs): Promise<number> {
  const { Tensor } = await import('onnxruntime-node');
  const length = Math.floor((streamMegabytes * 2 ** 20) / 4);
  const graph = new Graph();
  const x = graph.input('x', 'float32', [length]);
  const y = graph.initializer('y', { dtype: 'float32', shape: [length], data: filled(length, 4) });
  let sum = x;
  for (let i = 0; i < chainedAdds; i++)
    sum = graph.node('Add', [sum, y], {}, [{ dtype: 'float32', shape: [length] }])[0] ?? x;
  const [max] = graph.node('ReduceMax', [sum], { keepdims: { kind: 'int', value: 0 } }, [
    { dtype: 'float32', shape: [] },
  ]);
  graph.output(max ?? x, 'max');
  const session = await sessionOf(graph, threads);
  const feeds = { x: new Tensor('float32', filled(length, 3), [length]) };
  const seconds = await bestSeconds(reps, () => session.run(feeds));
  await session.release();
  return ((chainedAdds * 3 + 1) * 4 * length) / seconds / 1e9;
}

/** A JS memcpy (`Float32Array.set`) of `streamMegabytes` (read 1, write 1), GB/s: one thread. */
async function copyBandwidth({ streamMegabytes, reps }: RooflineArgs): Promise<number> {
  const length = Math.floor((streamMegabytes * 2 ** 20) / 4);
  const source = filled(length, 5);
  const target = new Float32Array(length);
  const seconds = await bestSeconds(reps, () => target.set(source));
  return (2 * 4 * length) / seconds / 1e9;
}

/** In a child: onnxruntime's matmul GFLOPS and Add bandwidth at `threads`, and the JS copy bandwidth. */
export async function measureRoofline(args: RooflineArgs): Promise<Measurement> {
  const figures = {
    matmulGflops: await matmulGflops(args),
    addGBps: await addBandwidth(args),
    copyGBps: await copyBandwidth(args),
  };
  return {
    system: 'onnxruntime (MatMul, Add) + JS copy',
    threads: String(args.threads),
    figures,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    note: `MatMul ${args.matmulSize}²; Add/copy ${args.streamMegabytes} MB arrays; best of ${args.reps}`,
  };
}
