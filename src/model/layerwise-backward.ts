/**
 * The training backward pass one decoder layer per compiled call: activation checkpointing by
 * layer (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost").
 *
 *   x₀ = embed[tokens];   xᵢ₊₁ = layerᵢ(xᵢ)                       keeps x₀ … x_L, [N, D] each
 *   value, ∂x_L, ∂head   = vjp(head surrogate)(x_L)
 *   for i = L−1 … 0:       ∂xᵢ, ∂θᵢ = vjp(layerᵢ)(xᵢ; ∂xᵢ₊₁)      layer i's forward recomputed
 *   ∂embed              += vjp(gather)(∂x₀)                       when the embedding is trained
 *
 * Why: a compiled jax-js 0.1.25 program allocates every buffer it will use when it starts
 * (`JitProgram.execute` runs all its `malloc` steps before any kernel is submitted, and a freed
 * buffer returns to the allocator only once its kernels have run), so one compiled forward +
 * backward holds the sum of all its intermediates, not their peak live set. Measured by
 * bench/lora-backward-probe.ts at SmolLM2-135M's shape: ~145 MB per layer at 256 tokens, LoRA
 * or not, so 30 layers pass the 4 GiB wasm32 heap. Here each call holds one layer's (or the
 * head's) intermediates, and is awaited before the next is dispatched.
 *
 * The gradient is the whole-graph one up to float rounding (the embedding's two contributions
 * are summed in another order), for one more forward pass of the layers. Every layer runs the
 * same compiled function: its parameters are passed without the `layers.{i}.` prefix.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at, entry } from '../core/indexing.ts';
import { numpy as np, jit, grad, valueAndGrad, blockUntilReady, type JaxArray } from './jax.ts';
import type { ModelConfig } from './config.ts';
import {
  causalBias,
  decoderLayer,
  fullAttention,
  param,
  policyHeads,
  rmsNorm,
  valueHeadOutput,
  type DeviceParams,
  type HeadOutputs,
} from './transformer.ts';

/** Device inputs for a right-padded batch. */
export interface DeviceBatch {
  tokens: JaxArray; // [B·T] int32
  targets: JaxArray; // [B·T] int32
  keyMask: JaxArray; // [B, T]
  cos: JaxArray; // [1, 1, T, hd/2]
  sin: JaxArray; // [1, 1, T, hd/2]
  invTemperature: JaxArray; // [1]
}

/** Cotangents of the surrogate: dLoss/d(head output) in the packed next-token layout. */
export interface Cotangents {
  logprobs: JaxArray; // [B·T]
  entropies?: JaxArray; // [B·T]
  values?: JaxArray; // [B·T]
}

/** The heads a loss reads, so compiled variants skip what is not needed. */
export interface HeadNeeds {
  entropy: boolean;
  value: boolean;
  /** The value loss trains the value head only (TokenLoss.detachValueHead). */
  detachValue: boolean;
}

/** Σ_t g_t · logπ_t (+ entropies, values): the scalar whose gradient is the loss's. Consumes all. */
export function surrogateOfHeads(out: HeadOutputs, cot: Cotangents, needs: HeadNeeds): JaxArray {
  let total = out.logprobs.mul(cot.logprobs).sum();
  if (needs.entropy) total = total.add(headTerm(out.entropies, cot.entropies, 'entropies'));
  if (needs.value) total = total.add(headTerm(out.values, cot.values, 'values'));
  else out.values?.dispose();
  return total;
}

/** Σ head output ⊙ its cotangent; both must be there when the loss needs the head. */
function headTerm(output: JaxArray | undefined, cotangent: JaxArray | undefined, head: string): JaxArray {
  if (output === undefined || cotangent === undefined) {
    throw new InvalidArgumentError(`the loss needs the ${head} head, but the forward pass or the cotangents lack it`, {
      head,
    });
  }
  return output.mul(cotangent).sum();
}

/**
 * Whether a training call of `tokens` padded tokens should run layer by layer: when the
 * whole-graph program would allocate more than 2 GiB (half the wasm32 heap, which also holds the
 * weights, the moments and the scoring calls) by the estimate
 * 4 bytes · 67 · tokens · layers · (hiddenSize + intermediateSize). The factor 67 is measured at
 * SmolLM2-135M's widths (~145 MB per layer at 256 tokens); the default byte model measures about
 * half of it (~740 MB for 4 layers at 2,048 tokens, estimate 1.4 GB), so the estimate errs high.
 */
export function layerwiseByDefault(config: ModelConfig, tokens: number): boolean {
  const estimate = 4 * 67 * tokens * config.numLayers * (config.hiddenSize + config.intermediateSize);
  return estimate > 2 ** 31;
}

interface LayerMask {
  keyMask: JaxArray; // [B, T]
  cos: JaxArray;
  sin: JaxArray;
}

type Compiled = (...args: any[]) => any;

const LAYER_PREFIX = /^layers\.(\d+)\.(.+)$/;

/** The entries of layer `index`, renamed without their `layers.{index}.` prefix (not new references). */
function layerEntries(params: DeviceParams, index: number): DeviceParams {
  const layer: DeviceParams = {};
  for (const [name, array] of Object.entries(params)) {
    const [, layerIndex, weight] = LAYER_PREFIX.exec(name) ?? [];
    if (weight !== undefined && Number(layerIndex) === index) layer[weight] = array;
  }
  return layer;
}

function refs(params: DeviceParams): DeviceParams {
  return Object.fromEntries(Object.entries(params).map(([name, array]) => [name, array.ref]));
}

export class LayerwiseBackward {
  private readonly compiled = new Map<string, Compiled>();

  constructor(private readonly config: ModelConfig) {}

  /**
   * value and gradient of the surrogate with respect to `trained`, like one compiled
   * valueAndGrad over the whole model. Consumes every input. Returns the gradient in `order`.
   */
  async valueAndGrad(
    frozen: DeviceParams,
    trained: DeviceParams,
    batch: DeviceBatch,
    cot: Cotangents,
    needs: HeadNeeds,
    order: readonly string[],
  ): Promise<[JaxArray, DeviceParams]> {
    const { numLayers } = this.config;
    const all = { ...frozen, ...trained };
    const scale = all['lora.scale'];
    // Layer i's entries (new references when `again`: its backward reads them later), with the LoRA scale.
    const layerParams = (i: number, again: boolean) => {
      const entries = again ? refs(layerEntries(all, i)) : layerEntries(all, i);
      return scale === undefined ? entries : { ...entries, 'lora.scale': scale.ref };
    };
    const mask = (): LayerMask => ({ keyMask: batch.keyMask.ref, cos: batch.cos.ref, sin: batch.sin.ref });

    let x = (await blockUntilReady(this.embedForward()(param(all, 'embed').ref, batch.tokens.ref))) as JaxArray; // [N, D]
    const layerInputs: JaxArray[] = [];
    for (let i = 0; i < numLayers; i++) {
      layerInputs.push(x);
      x = (await blockUntilReady(this.layerForward()(layerParams(i, true), x.ref, mask()))) as JaxArray;
    }

    const headName = this.config.tieWordEmbeddings ? 'embed' : 'lmHead';
    const [value, head] = await this.head(all, trained, x, batch, cot, needs);
    const gradients: DeviceParams = {};
    if (headName in trained) {
      gradients.finalNorm = head.finalNorm;
      if (head.weight !== undefined) gradients[headName] = head.weight;
    } else head.finalNorm.dispose();
    for (const [name, g] of Object.entries(head.valueHead)) {
      if (name in trained) gradients[name] = g;
      else g.dispose();
    }
    let dx = head.x; // [N, D]

    for (let i = numLayers - 1; i >= 0; i--) {
      const [layerTrained, layerFrozen] = split(layerParams(i, false), layerEntries(trained, i));
      const out = (await blockUntilReady(
        this.layerBackward()(layerTrained, layerFrozen, at(layerInputs, i, 'layerInputs'), dx, mask()),
      )) as {
        trained: DeviceParams;
        x: JaxArray;
      };
      for (const [name, g] of Object.entries(out.trained)) gradients[`layers.${i}.${name}`] = g;
      dx = out.x;
    }
    if ('embed' in trained) {
      const fromHead = gradients.embed; // tied: the LM head's part
      gradients.embed = (await blockUntilReady(
        fromHead === undefined
          ? this.embedBackward()(param(all, 'embed'), batch.tokens, dx)
          : this.embedBackward()(param(all, 'embed'), batch.tokens, dx).add(fromHead),
      )) as JaxArray;
    } else {
      param(all, 'embed').dispose();
      batch.tokens.dispose();
      dx.dispose();
    }
    scale?.dispose();
    batch.keyMask.dispose();
    batch.cos.dispose();
    batch.sin.dispose();
    const ordered: DeviceParams = {};
    for (const name of order) ordered[name] = entry(gradients, name, 'gradient');
    return [value, ordered];
  }

  /** The head's two calls (headLoss, headLinear): the value, and ∂ of x_L, finalNorm, the LM head and the value head. */
  private async head(
    all: DeviceParams,
    trained: DeviceParams,
    x: JaxArray,
    batch: DeviceBatch,
    cot: Cotangents,
    needs: HeadNeeds,
  ) {
    const config = this.config;
    const weight = param(all, config.tieWordEmbeddings ? 'embed' : 'lmHead');
    const valueHead: DeviceParams = config.valueHead
      ? { 'valueHead.w': param(all, 'valueHead.w'), 'valueHead.b': param(all, 'valueHead.b') }
      : {};
    const loss = { targets: batch.targets, invTemperature: batch.invTemperature };
    const [value, grads] = (await blockUntilReady(
      this.headLoss(needs)(param(all, 'finalNorm').ref, weight.ref, valueHead, x.ref, loss, cot),
    )) as [JaxArray, { logits: JaxArray; h: JaxArray; valueHead: DeviceParams }];
    const trainHead = (config.tieWordEmbeddings ? 'embed' : 'lmHead') in trained;
    // Tied, the embedding is read again by its own backward (valueAndGrad): pass a new reference.
    const headWeight = config.tieWordEmbeddings ? weight.ref : weight;
    const back = (await blockUntilReady(
      this.headLinear(trainHead)(param(all, 'finalNorm'), headWeight, x, grads.logits, grads.h),
    )) as {
      x: JaxArray;
      finalNorm: JaxArray;
      weight?: JaxArray;
    };
    return [value, { ...back, valueHead: grads.valueHead }] as const;
  }

  private memo(key: string, make: () => Compiled): Compiled {
    const known = this.compiled.get(key);
    if (known !== undefined) return known;
    const fn = jit(make() as any) as Compiled;
    this.compiled.set(key, fn);
    return fn;
  }

  private layer(params: DeviceParams, x: JaxArray, mask: LayerMask): JaxArray {
    const [batch, seqLen] = mask.keyMask.shape as [number, number];
    const bias = causalBias(mask.keyMask, seqLen); // [B, 1, T, T]
    const attention = fullAttention(bias, this.config, batch, seqLen);
    return decoderLayer(
      params,
      '',
      x,
      { batch, queryLen: seqLen, cos: mask.cos, sin: mask.sin, attention },
      this.config,
    ); // [N, D]
  }

  private embedForward(): Compiled {
    return this.memo('embed', () => (embed: JaxArray, tokens: JaxArray) => np.take(embed, tokens, 0));
  }

  private layerForward(): Compiled {
    return this.memo(
      'layer',
      () => (params: DeviceParams, x: JaxArray, mask: LayerMask) => this.layer(params, x, mask),
    );
  }

  /** ∂/∂(trained, x) of Σ layer(x) ⊙ dOut: the layer's vjp, its forward recomputed. */
  private layerBackward(): Compiled {
    return this.memo(
      'layer-vjp',
      () => (trained: DeviceParams, frozen: DeviceParams, x: JaxArray, dOut: JaxArray, mask: LayerMask) =>
        grad((wrt: { trained: DeviceParams; x: JaxArray }) =>
          this.layer({ ...frozen, ...wrt.trained }, wrt.x, mask)
            .mul(dOut)
            .sum(),
        )({ trained, x }),
    );
  }

  /**
   * The surrogate from the last layer's output x_L, and its gradient with respect to the logits
   * [N, V], the final hidden states [N, D] (through the value head) and the value head's weights.
   * `weight` is the LM head: embed [V, D] tied, lmHead [D, V] untied. Consumes its inputs.
   */
  private headLoss(needs: HeadNeeds): Compiled {
    const config = this.config;
    return this.memo(
      `head-loss:${needs.entropy}:${needs.value}:${needs.detachValue}`,
      () =>
        (
          finalNorm: JaxArray,
          weight: JaxArray,
          valueHead: DeviceParams,
          x: JaxArray,
          batch: { targets: JaxArray; invTemperature: JaxArray },
          cot: Cotangents,
        ) => {
          const h = rmsNorm(x, finalNorm, config.rmsNormEps); // [N, D]
          const logits = config.tieWordEmbeddings ? np.matmul(h.ref, weight.transpose()) : np.matmul(h.ref, weight); // [N, V]
          return valueAndGrad((wrt: { logits: JaxArray; h: JaxArray; valueHead: DeviceParams }) => {
            const values = config.valueHead
              ? valueHeadOutput(wrt.valueHead, wrt.h, needs.detachValue)
              : (wrt.h.dispose(), undefined);
            const out = policyHeads(wrt.logits, batch.targets, batch.invTemperature, needs.entropy);
            return surrogateOfHeads({ ...out, values }, cot, needs);
          })({ logits, h, valueHead });
        },
    );
  }

  /**
   * Back through logits = RMSNorm(x_L) · headᵀ given ∂logits (and ∂h from the value head): ∂x_L,
   * ∂finalNorm and, with `trainHead`, ∂(embed or lmHead). Written out rather than left to jax-js's
   * vjp, which (0.1.25) fuses the softmax backward into the [N, V] · [V, D] product and recomputes
   * it D times per logit: 165 s for one 256-token row at 49,152 ids, against ~2 s for the product
   * of a materialised ∂logits (bench/lora-step-profile.ts).
   */
  private headLinear(trainHead: boolean): Compiled {
    const config = this.config;
    return this.memo(
      `head-linear:${trainHead}`,
      () => (finalNorm: JaxArray, weight: JaxArray, x: JaxArray, dLogits: JaxArray, dHidden: JaxArray) => {
        const dh = (
          config.tieWordEmbeddings ? np.matmul(dLogits.ref, weight) : np.matmul(dLogits.ref, weight.transpose())
        ).add(dHidden); // [N, D]
        const grads = grad((wrt: { x: JaxArray; finalNorm: JaxArray }) =>
          rmsNorm(wrt.x, wrt.finalNorm, config.rmsNormEps).mul(dh).sum(),
        )({ x: x.ref, finalNorm: finalNorm.ref });
        const out: { x: JaxArray; finalNorm: JaxArray; weight?: JaxArray } = grads;
        if (trainHead) {
          const h = rmsNorm(x, finalNorm, config.rmsNormEps); // [N, D]
          out.weight = config.tieWordEmbeddings ? np.matmul(dLogits.transpose(), h) : np.matmul(h.transpose(), dLogits); // [V, D] or [D, V]
        } else {
          x.dispose();
          finalNorm.dispose();
          dLogits.dispose();
        }
        return out;
      },
    );
  }

  /** ∂/∂embed of Σ embed[tokens] ⊙ dx₀. */
  private embedBackward(): Compiled {
    return this.memo(
      'embed-vjp',
      () => (embed: JaxArray, tokens: JaxArray, dx: JaxArray) =>
        grad((e: JaxArray) => np.take(e, tokens, 0).mul(dx).sum())(embed),
    );
  }
}

/** Splits `params` into (trained, frozen) by the names of `trained`. */
function split(params: DeviceParams, trained: DeviceParams): [DeviceParams, DeviceParams] {
  const isTrained: DeviceParams = {};
  const isFrozen: DeviceParams = {};
  for (const [name, array] of Object.entries(params)) (name in trained ? isTrained : isFrozen)[name] = array;
  return [isTrained, isFrozen];
}
