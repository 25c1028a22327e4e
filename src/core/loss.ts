/**
 * The contract between the algorithms (pure JS) and a trainable model.
 *
 * Token alignment, used everywhere: for a sequence `tokens[0..T)`, position t holds the quantity
 * for *generating token t* from the prefix `tokens[0..t)`:
 *   logprobs[t]  = log π(tokens[t] | tokens[<t])       (logprobs[0] = 0: nothing predicts it)
 *   entropies[t] = entropy of π(· | tokens[<t])         (entropies[0] = 0)
 *   values[t]    = V(tokens[<t]), the value head read at position t−1 (values[0] = 0)
 * This is verl's alignment (values and log-probs both read at the position before the token).
 *
 * A loss is a pure function of these arrays that returns its value and its gradient with respect
 * to each array. The model then back-propagates `Σ_t grad[t] · logprobs[t]` (+ values, entropies)
 * into its parameters — the same split a remote trainer's custom-loss forward/backward uses.
 */
export interface TokenLossInput {
  /** One array per sequence, each as long as that sequence. */
  logprobs: Float32Array[];
  /** Present when the model has a value head. */
  values?: Float32Array[];
  /** Per-token entropies of the current policy. */
  entropies?: Float32Array[];
}

export interface TokenLossOutput {
  loss: number;
  /** dLoss/dlogprobs[t], same shapes as `logprobs`. */
  gradLogprobs: Float32Array[];
  /** dLoss/dvalues[t], when the loss trains the value head. */
  gradValues?: Float32Array[];
  /** dLoss/dentropies[t], when the loss has an entropy term. */
  gradEntropies?: Float32Array[];
  metrics: Record<string, number>;
}

export interface TokenLoss {
  /** Metric prefix and name in logs. */
  name: string;
  /**
   * False when the gradient does not depend on the current log-probs, values or entropies (e.g.
   * the SFT negative log-likelihood, whose gradient is −mask/count). The model can then skip the
   * extra forward pass and fuse forward, backward and the optimizer into one compiled call.
   */
  dependsOnCurrent: boolean;
  /**
   * True when the value loss should train the value head alone: the head then reads the hidden
   * states through a stop-gradient, so a critic sharing the policy's trunk cannot move it.
   */
  detachValueHead?: boolean;
  /**
   * The same loss as one a remote trainer computes itself (Tinker's `ppo`, `cispo`,
   * `importance_sampling`), when it is one: a backend may then send it in one round trip with the
   * sampler's log-probs instead of computing `compute` locally. Absent: `compute` is the only form.
   */
  serverLoss?: ServerLossSpec;
  /**
   * Per sequence (its length), nonzero at the positions the loss reads: its value and gradient
   * depend on the log-probs (entropies, values) there only, so a model may compute its heads at
   * those positions alone and pass 0 elsewhere (the prompt and the env's tokens of an episode are
   * context, not read). Absent: every position.
   */
  lossMask?: readonly ArrayLike<number>[];
  compute(input: TokenLossInput): TokenLossOutput;
}

/** A loss in the terms of a server-side objective: L = Σ_t ℓ(r_t, A_t), r_t = exp(logp_t − q_t). */
export interface ServerLossSpec {
  lossFunction: 'importance_sampling' | 'ppo' | 'cispo';
  /** Per-token advantages × the aggregation's token weights (index t = token t; 0 = not trained). */
  advantages: readonly Float32Array[];
  /** q: the log-probs the ratio is taken against (the old / sampling log-probs). */
  samplingLogprobs: readonly Float32Array[];
  /** Ratio bounds (ppo, cispo), e.g. { low: 0.8, high: 1.28 }. */
  clip?: { low: number; high: number };
  /** Per-token ratio bounds, overriding `clip`. */
  perTokenClip?: { low: readonly Float32Array[]; high: readonly Float32Array[] };
}
