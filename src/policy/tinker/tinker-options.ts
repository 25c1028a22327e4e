/** TinkerPolicy's options, and what it refuses: a value head and an entropy term the remote trainer cannot train. */
import type { ChatFormat } from '../../chat/chat-format.ts';
import type { Tokenizer } from '../../chat/tokenizer.ts';
import { InvalidArgumentError } from '../../core/errors.ts';
import type { TinkerClientOptions } from './tinker-client.ts';
import { TinkerUnsupportedError } from './tinker-error.ts';
import { type TinkerWire, tinkerWires } from './tinker-training.ts';
import { type LossReduction, lossReductions } from './wire.ts';

export interface TinkerPolicyOptions extends TinkerClientOptions {
  /** The server's base model: a hub name (hosted) or the model folder the server was started with (SkyRL tx). */
  baseModel: string;
  /** LoRA rank. Default 8. */
  rank?: number;
  /** Seed of the LoRA initialisation. Default 0. */
  seed?: number;
  /** Tokenizer of the prompt and generated ids (the base model's). Default the built-in byte tokenizer. */
  tokenizer?: Tokenizer;
  /** Longest prompt + generation. Default Infinity. */
  contextWindow?: number;
  /** The base model's chat protocol (src/chat: its tokenizer.json and Jinja template); the rollout renders with it. Its tokenizer replaces `tokenizer`. */
  chatFormat?: ChatFormat;
  /** How the server reduces the per-token loss (./wire.ts): 'sum' for hosted Tinker (default), 'sequence-mean' for SkyRL tx 0.3.0. */
  lossReduction?: LossReduction;
  /** Adam ε sent with every optim_step when `OptimOptions.epsilon` is unset. Default 1e-8 (agentrl's). */
  epsilon?: number;
  /** Refused: the remote trainer has no value head (PPO's critic). */
  valueHead?: boolean;
  /** Refused unless 0: the remote trainer returns no entropies. */
  entropyCoef?: number;
  /** Samples in flight at once. Default 16. */
  concurrency?: number;
  /** An existing model id to attach to (skips create_model). */
  modelId?: string;
  /** Request encoding: 'protobuf' (the SDK 0.38's, hosted Tinker; default) or 'json' (servers that predate it: SkyRL 0.3.0). */
  wire?: TinkerWire;
  /** TTL of the sampler weights saved each optimizer step (the previous ones are deleted). Default 3600 s (the SDK's smallest). */
  samplerTtlSeconds?: number;
  /** TTL of the training checkpoints `save`/`saveState` write; undefined = kept until deleted (default). */
  checkpointTtlSeconds?: number;
}

export function checkOptions(options: TinkerPolicyOptions): void {
  if (typeof options.baseModel !== 'string' || options.baseModel === '')
    throw new InvalidArgumentError('TinkerPolicy needs { baseModel }: the name or folder the server serves', {});
  if (options.valueHead === true) {
    throw new TinkerUnsupportedError(
      'valueHead',
      'TinkerPolicy has no value head: the Tinker API trains a LoRA on the language model only, so PPO with a critic (advantageEstimator gae, vfCoef > 0) cannot run on it; use the GRPO family (grpo, rloo, reinforce++) or the built-in model',
    );
  }
  if ((options.entropyCoef ?? 0) !== 0) {
    throw new TinkerUnsupportedError(
      'entropy',
      `TinkerPolicy cannot train an entropy term (entropyCoef ${options.entropyCoef}): the Tinker API returns per-token log-probs of the targets only, not the full distribution; set entropyCoef to 0`,
    );
  }
  const rank = options.rank ?? 8;
  if (!Number.isInteger(rank) || rank < 1)
    throw new InvalidArgumentError(`rank must be a positive integer, got ${rank}`, { rank });
  if (options.lossReduction !== undefined && !lossReductions.includes(options.lossReduction)) {
    throw new InvalidArgumentError(
      `lossReduction must be one of ${lossReductions.join(', ')}, got "${options.lossReduction}"`,
      { lossReduction: options.lossReduction },
    );
  }
  if (options.wire !== undefined && !tinkerWires.includes(options.wire))
    throw new InvalidArgumentError(`wire must be one of ${tinkerWires.join(', ')}, got "${options.wire}"`, {
      wire: options.wire,
    });
  for (const [name, ttl] of [
    ['samplerTtlSeconds', options.samplerTtlSeconds],
    ['checkpointTtlSeconds', options.checkpointTtlSeconds],
  ] as const)
    if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 3600 || ttl > 315_360_000))
      throw new InvalidArgumentError(
        `${name} must be whole seconds from 3600 (1 hour) to 315360000 (10 years), got ${ttl}`,
        {
          [name]: ttl,
        },
      );
  const apiKey = options.apiKey ?? (options.environment ?? process.env).TINKER_API_KEY;
  if (apiKey !== undefined && apiKey !== '' && !apiKey.startsWith('tml-') && !apiKey.startsWith('eyJ'))
    throw new InvalidArgumentError(
      'the Tinker API key must start with "tml-" (as the SDK checks); check TINKER_API_KEY',
      {},
    );
  const concurrency = options.concurrency ?? 16;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new InvalidArgumentError(`concurrency must be a positive integer, got ${concurrency}`, { concurrency });
}

/** A loss's value or entropy gradient that is not all zeros is refused: the server trains neither. */
export function refuseUnsupportedGradients(
  gradValues: Float32Array[] | undefined,
  gradEntropies: Float32Array[] | undefined,
): void {
  const nonZero = (arrays: Float32Array[] | undefined): boolean =>
    arrays?.some((array) => array.some((x) => x !== 0)) ?? false;
  if (nonZero(gradValues))
    throw new TinkerUnsupportedError(
      'valueHead',
      'the loss has a value term, but TinkerPolicy has no value head; drop the critic (vfCoef 0 / no returns) or use the built-in model',
    );
  if (nonZero(gradEntropies))
    throw new TinkerUnsupportedError(
      'entropy',
      'the loss has an entropy term, but TinkerPolicy gets no entropies from the server; set entropyCoef to 0',
    );
}
