/**
 * The built-in model's compiled functions, one per kind and head needs (jax-js then caches one
 * executable per input shape): the forward heads (scoring), the surrogate's value and gradient,
 * the fused forward + backward + clip + AdamW step, AdamW alone, and the gradient sum.
 */
import { jit, valueAndGrad, tree, type JaxArray } from './jax.ts';
import type { ModelConfig } from './config.ts';
import { hiddenStates, outputHeads, param, type DeviceParams } from './transformer.ts';
import { clipAndAdamW, type AdamState } from './adamw.ts';
import { surrogateOfHeads, type Cotangents, type DeviceBatch, type HeadNeeds } from './layerwise-backward.ts';

type Compiled = (...args: any[]) => any;

/** The heads a compiled forward returns: only defined leaves (a jax-js tree must not hold `undefined`). */
export interface HeadArrays {
  logprobs: JaxArray;
  entropies?: JaxArray;
  values?: JaxArray;
}

export class CompiledSteps {
  private readonly compiled = new Map<string, Compiled>();

  /** `decayed`: the trained arrays AdamW decays; `names`: their canonical order (params.ts). */
  constructor(
    private readonly config: ModelConfig,
    private readonly decayed: Set<string>,
    private readonly names: readonly string[],
  ) {}

  /** (params, batch) → the heads `needs` asks for. */
  heads(needs: HeadNeeds): Compiled {
    return this.memo(`heads:${needs.entropy}:${needs.value}`, () => (params: DeviceParams, batch: DeviceBatch) => ({
      ...this.forward(params, batch, needs),
    }));
  }

  /** (frozen, trained, batch, cotangents) → [surrogate, ∂surrogate/∂trained]. */
  grad(needs: HeadNeeds): Compiled {
    return this.memo(
      `grad:${needs.entropy}:${needs.value}:${needs.detachValue}`,
      () => (frozen: DeviceParams, params: DeviceParams, batch: DeviceBatch, cot: Cotangents) =>
        valueAndGrad((p: DeviceParams) => this.surrogate({ ...frozen, ...p }, batch, cot, needs))(params),
    );
  }

  /** (frozen, trained, adam, batch, cotangents, hyper) → { params, state, gradNorm, value }: one whole step. */
  fused(needs: HeadNeeds): Compiled {
    return this.memo(
      `fused:${needs.entropy}:${needs.value}:${needs.detachValue}`,
      () =>
        (
          frozen: DeviceParams,
          params: DeviceParams,
          state: AdamState,
          batch: DeviceBatch,
          cot: Cotangents,
          hyper: JaxArray,
        ) => {
          const [value, grads] = valueAndGrad((p: DeviceParams) =>
            this.surrogate({ ...frozen, ...p }, batch, cot, needs),
          )(tree.ref(params));
          const out = clipAndAdamW(params, state, grads, hyper, this.decayed, this.names);
          return { ...out, value };
        },
    );
  }

  /** (trained, adam, grads, hyper) → { params, state, gradNorm }. */
  adam(): Compiled {
    return this.memo(
      'adam',
      () => (params: DeviceParams, state: AdamState, grads: DeviceParams, hyper: JaxArray) =>
        clipAndAdamW(params, state, grads, hyper, this.decayed, this.names),
    );
  }

  /** (a, b) → a + b, name by name. */
  add(): Compiled {
    return this.memo('add', () => (a: DeviceParams, b: DeviceParams) => {
      const sum: DeviceParams = {};
      for (const name of this.names) sum[name] = param(a, name).add(param(b, name));
      return sum;
    });
  }

  private forward(params: DeviceParams, batch: DeviceBatch, needs: HeadNeeds): HeadArrays {
    const [B, T] = batch.keyMask.shape as [number, number];
    const h = hiddenStates(params, this.config, batch.tokens, batch.keyMask, batch.cos, batch.sin, B, T);
    const out = outputHeads(
      params,
      this.config,
      h,
      batch.targets,
      batch.invTemperature,
      needs.entropy,
      needs.detachValue,
    );
    const result: HeadArrays = { logprobs: out.logprobs };
    if (out.entropies) result.entropies = out.entropies;
    if (out.values) {
      if (needs.value) result.values = out.values;
      else out.values.dispose();
    }
    return result;
  }

  private surrogate(params: DeviceParams, batch: DeviceBatch, cot: Cotangents, needs: HeadNeeds): JaxArray {
    return surrogateOfHeads(this.forward(params, batch, needs), cot, needs);
  }

  /** Compiles `make()` once per key. */
  private memo(key: string, make: () => (...args: any[]) => unknown): Compiled {
    let fn = this.compiled.get(key);
    if (fn === undefined) {
      fn = jit(make() as any) as Compiled;
      this.compiled.set(key, fn);
    }
    return fn;
  }
}
