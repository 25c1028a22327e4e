/**
 * The only entry to the tensor library. `jax-setup.ts` runs first (see there why).
 */
import './jax-setup.ts';

export {
  numpy,
  nn,
  lax,
  random,
  tree,
  jit,
  grad,
  valueAndGrad,
  vjp,
  init,
  defaultDevice,
  blockUntilReady,
} from '@jax-js/jax';
export type { Array as JaxArray, DType } from '@jax-js/jax';
export { threadCount } from './jax-setup.ts';

import { init, defaultDevice, type Array as JaxArray } from '@jax-js/jax';
import { at } from '../core/indexing.ts';

let ready: Promise<void> | undefined;

/** Starts the wasm backend once (never the WebGPU probe, which needs a browser). */
export function initJax(): Promise<void> {
  ready ??= init('wasm').then(() => {
    defaultDevice('wasm');
  });
  return ready;
}

/** The first element of a device array, on the host (a loss value, a gradient norm). Consumes the array. */
export async function readScalar(array: JaxArray): Promise<number> {
  return at((await array.data()) as Float32Array, 0, 'scalar');
}
