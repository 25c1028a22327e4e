/**
 * The Tinker wire format of agentrl's token batches (read from the `tinker` SDK's types and SkyRL
 * tx's `tx/tinker/api.py`), and the conversion of a `TokenLoss` gradient into per-token inputs.
 *
 * A sequence `tokens[0..T)` is one `Datum`: model_input = tokens[0..T−1), target_tokens =
 * tokens[1..T), so the server's logprob i is agentrl's logprobs[i+1] (core/loss.ts alignment;
 * logprobs[0] = 0).
 *
 * The gradient reaches the server's backward pass in one of two encodings (`LossReduction`):
 * - 'sum' — hosted Tinker: `cross_entropy` is L = Σ_t −w_t·logp_t (no normalisation; the SDK's
 *   `forward_backward_custom` relies on it), so w_t = −dL/dlogp_t gives dL/dθ exactly — used when
 *   every w_t ≥ 0 (SFT, a one-sided loss). A gradient with positive entries goes as
 *   `importance_sampling` at the current log-probs, advantages −dL/dlogp (−Σ ratio·A: gradient −A at
 *   ratio 1), whose sign survives a server that normalises (signed CE weights pushed a positive-
 *   advantage token DOWN on SkyRL, which divides by Σw).
 * - 'sequence-mean' — SkyRL tx 0.3.0: every loss is divided per sequence by Σ_t w_t
 *   (SkyRL tx's JAX backend: `per_token_losses.sum(-1) / max(loss_mask.sum(-1), 1e-9)`), and the
 *   accumulated gradient by the number of sequences at optim_step. Weights −dL/dlogp of mixed sign
 *   would be divided by their own (possibly negative → 1e-9) sum, so this encoding sends
 *   `importance_sampling` instead: weights 1 (a positive, known sum T−1), sampling log-probs = the
 *   current log-probs (ratio exp(logp − logp_current) = 1, whose gradient is ∇logp) and advantages
 *   A_t = −dL/dlogp_t · (T−1) · N, which cancels both divisions for N sequences per optim step.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';

export type LossReduction = 'sum' | 'sequence-mean';
export const lossReductions: readonly LossReduction[] = ['sum', 'sequence-mean'];

export interface TensorData {
  data: number[];
  dtype: 'int64' | 'float32';
  shape: number[];
}

export interface Datum {
  model_input: { chunks: { type: 'encoded_text'; tokens: number[] }[] };
  loss_fn_inputs: Record<string, TensorData>;
}

export type LossFunctionName = 'cross_entropy' | 'importance_sampling';

const int64 = (data: number[]): TensorData => ({ data, dtype: 'int64', shape: [data.length] });
const float32 = (data: number[]): TensorData => ({ data, dtype: 'float32', shape: [data.length] });

export function modelInput(tokens: readonly number[]): Datum['model_input'] {
  return { chunks: [{ type: 'encoded_text', tokens: [...tokens] }] };
}

/** A sequence as a Datum; `perToken` holds the remaining loss_fn_inputs in agentrl alignment (index 0 dropped). */
export function toDatum(sequence: readonly number[], perToken: Record<string, ArrayLike<number>> = {}): Datum {
  if (sequence.length < 2)
    throw new InvalidArgumentError(
      `a Tinker datum needs a sequence of at least 2 tokens (one to predict), got ${sequence.length}`,
      { length: sequence.length },
    );
  const loss_fn_inputs: Record<string, TensorData> = { target_tokens: int64(sequence.slice(1)) };
  for (const [name, values] of Object.entries(perToken)) {
    if (values.length !== sequence.length)
      throw new InvalidArgumentError(
        `${name} has ${values.length} entries for a sequence of ${sequence.length} tokens`,
        { name },
      );
    loss_fn_inputs[name] = float32(Array.from(values).slice(1));
  }
  return { model_input: modelInput(sequence.slice(0, -1)), loss_fn_inputs };
}

/** Datums scoring the sequences (weights 1, the loss is not used). */
export function scoringData(sequences: readonly (readonly number[])[]): Datum[] {
  return sequences.map((sequence) => toDatum(sequence, { weights: sequence.map(() => 1) }));
}

/**
 * True when the gradient must reach the server as `importance_sampling` at the current log-probs
 * (which then have to be known): always for 'sequence-mean', and for 'sum' when some token's
 * gradient is positive (a negative cross-entropy weight) — signed weights are exact only on a
 * server that sums, and a server that divides by Σw flips or blows them up (SkyRL), while an
 * importance-sampling advantage keeps its sign under any positive normalisation.
 */
export function needsCurrentLogprobs(gradLogprobs: readonly Float32Array[], reduction: LossReduction): boolean {
  return reduction === 'sequence-mean' || gradLogprobs.some((grad) => grad.some((g) => g > 0));
}

/** The forward_backward request for the gradient `gradLogprobs` (dL/dlogp, agentrl alignment). */
export function gradientData(
  sequences: readonly (readonly number[])[],
  gradLogprobs: readonly Float32Array[],
  reduction: LossReduction,
  currentLogprobs?: readonly Float32Array[],
): { lossFunction: LossFunctionName; data: Datum[] } {
  if (gradLogprobs.length !== sequences.length)
    throw new InvalidArgumentError(`${gradLogprobs.length} gradients for ${sequences.length} sequences`, {});
  if (!needsCurrentLogprobs(gradLogprobs, reduction)) {
    // Σ_t w_t·(−logp_t) with w_t = −dL/dlogp_t ≥ 0: the loss's gradient, on a server that sums.
    return {
      lossFunction: 'cross_entropy',
      data: sequences.map((sequence, s) =>
        toDatum(sequence, { weights: at(gradLogprobs, s, 'gradients').map((g) => (g === 0 ? 0 : -g)) }),
      ),
    };
  }
  if (currentLogprobs === undefined)
    throw new InvalidArgumentError(
      `this gradient reaches the server as importance_sampling, which needs the current log-probs (reduction '${reduction}')`,
      { reduction },
    );
  const count = sequences.length;
  return {
    lossFunction: 'importance_sampling',
    data: sequences.map((sequence, s) => {
      // 'sum': −Σ ratio·A, gradient −A at ratio 1. 'sequence-mean': ÷(T−1) per sequence and ÷N at optim_step, cancelled here.
      const scale = reduction === 'sum' ? 1 : (sequence.length - 1) * count;
      const perToken: Record<string, ArrayLike<number>> = {
        advantages: at(gradLogprobs, s, 'gradients').map((g) => (g === 0 ? 0 : -g * scale)),
        logprobs: at(currentLogprobs, s, 'current log-probs'),
      };
      if (reduction === 'sequence-mean') perToken.weights = sequence.map(() => 1);
      return toDatum(sequence, perToken);
    }),
  };
}

/** The per-sequence log-probs of a forward / forward_backward answer, in agentrl alignment (index 0 = 0). */
export function logprobsOfOutput(answer: unknown, sequences: readonly (readonly number[])[]): Float32Array[] | string {
  const outputs = (answer as { loss_fn_outputs?: unknown } | null)?.loss_fn_outputs;
  if (!Array.isArray(outputs) || outputs.length !== sequences.length)
    return `expected loss_fn_outputs with ${sequences.length} entries`;
  const result: Float32Array[] = [];
  for (const [s, sequence] of sequences.entries()) {
    const data = (outputs[s] as { logprobs?: { data?: unknown } } | undefined)?.logprobs?.data;
    const length = sequence.length;
    if (!Array.isArray(data) || data.length !== length - 1 || !data.every((x) => typeof x === 'number'))
      return `loss_fn_outputs[${s}].logprobs.data is not ${length - 1} numbers`;
    const logprobs = new Float32Array(length);
    logprobs.set(data as number[], 1);
    result.push(logprobs);
  }
  return result;
}

/**
 * The gradient norm an `optim_step` reported: `grad_norm` (or `grad_norm:mean`), or a
 * vendor-prefixed key such as SkyRL's `skyrl.ai/grad_norm`; NaN when the server reports none.
 */
export function reportedGradNorm(metrics: Readonly<Record<string, unknown>>): number {
  const key =
    ['grad_norm', 'grad_norm:mean'].find((k) => k in metrics) ??
    Object.keys(metrics).find((k) => k.endsWith('/grad_norm'));
  return key === undefined ? Number.NaN : Number(metrics[key]);
}
