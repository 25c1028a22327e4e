/** dh = g · E at the head's shape: E [V, D] read along V (strided) vs Eᵀ [D, V] (contiguous). Env PROBE_VOCAB. */
import { numpy as np, jit, initJax } from '../src/model/jax.ts';
await initJax();
const V = Number(process.env.PROBE_VOCAB ?? 49152),
  N = 256,
  D = 576;
const rand = (n: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898) * 0.1);
const g = np.array(rand(N * V)).reshape([N, V]);
const e = np.array(rand(V * D)).reshape([V, D]);
const et = np.array(rand(V * D)).reshape([D, V]);
const strided = jit((a: any, b: any) => np.matmul(a, b));
const contiguous = jit((a: any, b: any) => np.matmul(a, b.transpose()));
const forward = jit((h: any, b: any) => np.matmul(h, b.transpose()));
const h = np.array(rand(N * D)).reshape([N, D]);
for (const [label, run] of [
  ['g · E, E [V, D] (reduction over V strided)', () => strided(g.ref, e.ref)],
  ['g · (Eᵀ)ᵀ, Eᵀ [D, V] (reduction over V contiguous)', () => contiguous(g.ref, et.ref)],
  ['h · Eᵀ, E [V, D] (forward logits, reduction over D contiguous)', () => forward(h.ref, e.ref)],
] as const) {
  for (let i = 0; i < 2; i++) {
    const start = performance.now();
    await (run() as any).data();
    console.log(`${label}: ${((performance.now() - start) / 1000).toFixed(2)} s`);
  }
}
