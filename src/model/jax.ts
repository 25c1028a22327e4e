/**
 * The only entry to the tensor library, loaded on first use. `initJax()` — which every model
 * constructor awaits (TransformerModel.create / fromParams) — evaluates `jax-setup.ts` (see there
 * why it must come first), then imports @jax-js/jax and fills the bindings below. So importing
 * agentrl to compute a loss or run an env loads neither the library nor its wasm, and installs
 * none of jax-setup's globals. Call `initJax()` before using these bindings outside a model.
 */
import type * as Jax from '@jax-js/jax';
import { at } from '../core/indexing.ts';

export type { Array as JaxArray, DType } from '@jax-js/jax';
export { threadCount } from './thread-count.ts';

export let numpy: typeof Jax.numpy;
export let nn: typeof Jax.nn;
export let lax: typeof Jax.lax;
export let random: typeof Jax.random;
export let tree: typeof Jax.tree;
export let jit: typeof Jax.jit;
export let grad: typeof Jax.grad;
export let valueAndGrad: typeof Jax.valueAndGrad;
export let vjp: typeof Jax.vjp;
export let init: typeof Jax.init;
export let defaultDevice: typeof Jax.defaultDevice;
export let blockUntilReady: typeof Jax.blockUntilReady;

let ready: Promise<void> | undefined;

/** Loads the library and starts its wasm backend once (never the WebGPU probe, which needs a browser). */
export function initJax(): Promise<void> {
  ready ??= (async () => {
    await import('./jax-setup.ts');
    const jax = await import('@jax-js/jax');
    ({ numpy, nn, lax, random, tree, jit, grad, valueAndGrad, vjp, init, defaultDevice, blockUntilReady } = jax);
    await jax.init('wasm');
    jax.defaultDevice('wasm');
  })();
  return ready;
}

/** The first element of a device array, on the host (a loss value, a gradient norm). Consumes the array. */
export async function readScalar(array: Jax.Array): Promise<number> {
  return at((await array.data()) as Float32Array, 0, 'scalar');
}
