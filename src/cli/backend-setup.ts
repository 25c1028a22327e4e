/**
 * `agentrl train --backend builtin|tinker`: which `TrainablePolicy` the run trains. The trainers
 * see only the contract, so a Tinker run is recorded in the store like a built-in one (config,
 * metrics, trajectories, resumable state — for Tinker the server checkpoint each `saveState`
 * names — and checkpoint folders as the backend writes them).
 *
 *   agentrl train --env bandit --backend tinker --base-url http://127.0.0.1:8000 --base-model /models/tiny --lora-rank 8 \
 *     --tinker-loss-reduction sequence-mean      # SkyRL tx; hosted Tinker: 'sum' (the default), TINKER_API_KEY in the env
 *
 * Everything a Tinker run cannot do is refused before the run is created (`checkBackendOptions`):
 * PPO (no value head), an entropy bonus, gradient clipping on `--tinker-wire json` (a raw SkyRL
 * 0.3.0 drops `grad_clip_norm`; the protobuf wire sends it — the `tinker` backend defaults
 * `maxGradNorm` to 0, the SDK's AdamParams default, and `loraRank` to 8: `backendPreset`),
 * `--model`/`--init` (built-in weights), the built-in LoRA's alpha/dropout/targets. A pretrained
 * base model gets its preset (model-presets.ts); the KL / DPO reference is a sampling client of the
 * reference weights (`TinkerPolicy.reference`), not a second LoRA training run.
 *
 * LoRA on the built-in model: `--model <source> --lora-rank 16 [--lora-alpha 32 --lora-dropout 0
 * --lora-targets q_proj,v_proj]` trains adapters on the frozen weights of --model (model/lora.ts),
 * and with a critic (--algo ppo) the value head too (zero-initialised on a --model without one);
 * only the adapters, the trained head and their moments are in the run's resumable state, so
 * resuming and the KL reference restore them onto the base weights reloaded from --model (the
 * run's saved config names it). Refused: --lora-rank without --model (nothing to adapt),
 * --lora-alpha/-dropout/-targets without --lora-rank.
 */
import { z } from 'zod';
import { InvalidArgumentError, UnknownNameError } from '../core/errors.ts';
import type { EnvDescriptor } from '../envs/index.ts';
import type { LoadedCheckpoint } from '../model/checkpoint.ts';
import { withZeroValueHead } from '../model/config.ts';
import { loraModuleWeights, type LoraConfigInput, type LoraModule } from '../model/lora.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { parseBuiltinState, restoreBuiltinModel } from '../policy/builtin-state.ts';
import { sharedBaseRestorer } from '../train/multi-agent/shared-base.ts';
import { lossReductions, tinkerWires } from '../policy/tinker/index.ts';
import type { ReferencePolicy, TrainablePolicy } from '../policy/types.ts';
import { algorithmPresets, type AlgorithmName } from '../train/algorithm-presets.ts';
import { checkSameModel, modelSpecOf, prepareModel, warmStartPolicy, type PrepareModelOptions } from './model-setup.ts';
import { tinkerBackend, tinkerChatFormat } from './tinker-backend.ts';

export const backendNames = ['builtin', 'tinker'] as const;

export const backendSchema = z.object({
  backend: z
    .enum(backendNames)
    .default('builtin')
    .describe(`training backend (${backendNames.join(', ')})`),
  baseUrl: z
    .string()
    .optional()
    .describe(
      'tinker: the server root, e.g. http://127.0.0.1:8000 (hosted Tinker: its URL; API key from TINKER_API_KEY)',
    ),
  baseModel: z
    .string()
    .optional()
    .describe('tinker: the base model the server serves (a hub name, or the folder SkyRL tx was started with)'),
  tokenizer: z
    .string()
    .optional()
    .describe(
      "tinker: a model folder or tokenizer.json whose tokenizer and chat template to use (hosted Tinker, where --base-model is a hub name), or 'bytes' for agentrl's byte tokenizer (a model trained with it); default --base-model when it is a local folder holding tokenizer.json — a hub name without it is refused",
    ),
  loraRank: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'LoRA rank: builtin — train adapters of this rank on the frozen --model weights (default: train every weight); tinker — the rank of the LoRA the server trains (default 8)',
    ),
  loraAlpha: z
    .number()
    .positive()
    .optional()
    .describe('builtin LoRA: the update is scaled by alpha / rank (default 32)'),
  loraDropout: z
    .number()
    .min(0)
    .lt(1)
    .optional()
    .describe('builtin LoRA: dropout on the adapter input in training (default 0)'),
  loraTargets: z
    .string()
    .optional()
    .describe(
      `builtin LoRA: comma-separated projections that get adapters (default all: ${Object.keys(loraModuleWeights).join(',')})`,
    ),
  tinkerLossReduction: z
    .enum(lossReductions)
    .default('sum')
    .describe(
      "tinker: how the server reduces the per-token loss ('sum' hosted Tinker, 'sequence-mean' SkyRL tx 0.3.0)",
    ),
  tinkerWire: z
    .enum(tinkerWires)
    .default('protobuf')
    .describe(
      "tinker: the request encoding — 'protobuf' (the SDK 0.38's: hosted Tinker, check:tinker's strict server) or 'json' (a raw SkyRL 0.3.0 server, which drops grad_clip_norm, so --max-grad-norm is refused there)",
    ),
});
export type BackendOptions = z.infer<typeof backendSchema>;

/** Option defaults a backend sets (under the config file and the flags). */
export function backendPreset(backend: unknown): Record<string, unknown> {
  return backend === 'tinker' ? { maxGradNorm: 0, loraRank: 8 } : {};
}

type LoraFlags = Pick<BackendOptions, 'loraRank' | 'loraAlpha' | 'loraDropout' | 'loraTargets'>;

/** The built-in LoRA the flags ask for; undefined without --lora-rank (every weight trains). */
export function builtinLora(options: LoraFlags): LoraConfigInput | undefined {
  if (options.loraRank === undefined) return undefined;
  const allowed = Object.keys(loraModuleWeights) as LoraModule[];
  const targets = options.loraTargets
    ?.split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  for (const name of targets ?? [])
    if (!(allowed as string[]).includes(name)) throw new UnknownNameError('--lora-targets module', name, allowed);
  if (targets !== undefined && targets.length === 0)
    throw new InvalidArgumentError(`--lora-targets names no module; allowed: ${allowed.join(', ')}`);
  return {
    rank: options.loraRank ?? 8,
    ...(options.loraAlpha === undefined ? {} : { alpha: options.loraAlpha }),
    ...(options.loraDropout === undefined ? {} : { dropout: options.loraDropout }),
    ...(targets === undefined ? {} : { targetModules: targets as [LoraModule, ...LoraModule[]] }),
  };
}

/** The built-in backend's LoRA refusals (see the header). */
function checkBuiltinLora(options: LoraFlags & { model?: string; init?: string }): void {
  const extras = (['loraAlpha', 'loraDropout', 'loraTargets'] as const).filter((flag) => options[flag] !== undefined);
  if (options.loraRank === undefined) {
    const [extra] = extras;
    if (extra !== undefined)
      throw new InvalidArgumentError(`--${kebab(extra)} sets up LoRA adapters; pass --lora-rank too`, { flag: extra });
    return;
  }
  if (modelSpecOf(options) === undefined) {
    throw new InvalidArgumentError(
      '--lora-rank adapts a pretrained model: pass --model <folder | file.gguf | pulled name | checkpoint> too (a fresh model trains all its weights)',
      { loraRank: options.loraRank },
    );
  }
  builtinLora(options);
}

/** Refuses, before any run is created, a backend setting that cannot run. */
export function checkBackendOptions(
  options: Omit<BackendOptions, 'tinkerWire'> & {
    /** Absent: the protobuf wire (the default). */
    tinkerWire?: BackendOptions['tinkerWire'];
    algo: AlgorithmName;
    entropyCoef: number;
    maxGradNorm: number;
    temperature?: number;
    model?: string;
    init?: string;
  },
): void {
  if (options.backend !== 'tinker') {
    checkBuiltinOptions(options);
    return;
  }
  for (const flag of ['loraAlpha', 'loraDropout', 'loraTargets'] as const) {
    if (options[flag] !== undefined)
      throw new InvalidArgumentError(
        `--${kebab(flag)} sets up the built-in LoRA; the tinker backend takes --lora-rank only`,
        { flag },
      );
  }
  const missing = (['baseUrl', 'baseModel'] as const).filter(
    (flag) => options[flag] === undefined || options[flag] === '',
  );
  if (missing.length > 0) {
    throw new InvalidArgumentError(
      `--backend tinker needs ${missing.map((flag) => `--${kebab(flag)}`).join(' and ')} (the Tinker server and the base model it serves)`,
      { missing },
    );
  }
  if (algorithmPresets[options.algo].valueHead) {
    throw new InvalidArgumentError(
      `--algo ${options.algo} trains a critic (a value head), which the tinker backend does not have; use grpo, dr-grpo, dapo, gspo, cispo, rloo or reinforce++`,
      { algo: options.algo },
    );
  }
  if (options.entropyCoef !== 0)
    throw new InvalidArgumentError(
      `the tinker backend cannot train an entropy bonus; set --entropy-coef 0 (got ${options.entropyCoef})`,
      { entropyCoef: options.entropyCoef },
    );
  if (options.maxGradNorm !== 0 && options.tinkerWire === 'json')
    throw new InvalidArgumentError(
      `--tinker-wire json (a raw SkyRL 0.3.0 server) drops AdamParams.grad_clip_norm, so the gradient cannot be clipped there; set --max-grad-norm 0, or use the protobuf wire (hosted Tinker, an SDK-0.38 server) (got ${options.maxGradNorm})`,
      { maxGradNorm: options.maxGradNorm, tinkerWire: options.tinkerWire },
    );
  if ((options.temperature ?? 1) !== 1)
    throw new InvalidArgumentError(
      `the tinker backend scores log-probs at temperature 1 only (the server's forward has no temperature); set --temperature 1 (got ${options.temperature})`,
      { temperature: options.temperature },
    );
  const spec = modelSpecOf(options);
  if (spec !== undefined)
    throw new InvalidArgumentError(
      `--model/--init load weights into the built-in model; the tinker backend starts from --base-model (got ${spec})`,
      { model: spec },
    );
  tinkerChatFormat(options);
}

/** The built-in engine's side of checkBackendOptions: no tinker flag, a sound built-in LoRA. */
function checkBuiltinOptions(options: Parameters<typeof checkBackendOptions>[0]): void {
  for (const flag of ['baseUrl', 'baseModel', 'tokenizer'] as const) {
    if (options[flag] !== undefined)
      throw new InvalidArgumentError(`--${kebab(flag)} is a tinker backend flag; pass --backend tinker too`, {
        flag,
      });
  }
  // Flags with defaults: a value other than the default was asked for, and the built-in engine would ignore it.
  for (const [flag, fallback] of [
    ['tinkerWire', 'protobuf'],
    ['tinkerLossReduction', 'sum'],
  ] as const) {
    const value = options[flag] ?? fallback;
    if (value !== fallback)
      throw new InvalidArgumentError(`--${kebab(flag)} ${value} is a tinker backend flag; pass --backend tinker too`, {
        flag,
      });
  }
  checkBuiltinLora(options);
}

/** The run's policies: the starting one (warm-started), and restoring `saveState` bytes (resume, the KL reference). */
export interface PolicyBackend {
  readonly name: string;
  start(): Promise<TrainablePolicy>;
  restorePolicy(state: Uint8Array): Promise<TrainablePolicy>;
  restoreReference(state: Uint8Array): Promise<ReferencePolicy>;
  /** Frees what the backend holds (Tinker: unloads the LoRA runs, stops the heartbeats). */
  close(): Promise<void>;
}

/**
 * A built-in policy from `saveState` bytes (resume, the KL reference), in `init`'s chat format; a
 * LoRA state onto `init`'s base weights. Weights of another network than `--model` are refused.
 */
async function restoreBuiltinPolicy(
  bytes: Uint8Array,
  { spec, init, lora }: { spec?: string; init?: LoadedCheckpoint; lora: boolean },
): Promise<BuiltinPolicy> {
  const state = parseBuiltinState(bytes);
  if (init !== undefined && spec !== undefined) checkSameModel(spec, init.config, state.modelConfig);
  // A LoRA PPO run's base got a zero value head at the start (prepareModel); the trained one is in the state.
  const base = init !== undefined && state.modelConfig.valueHead ? withZeroValueHead(init.config, init.params) : init;
  const model = await restoreBuiltinModel(state, { baseParams: lora ? base?.params : undefined });
  return new BuiltinPolicy({ model, chatFormat: init?.chatFormat });
}

export { byteTokenizerName, tinkerChatFormat, tinkerPolicyOptions } from './tinker-backend.ts';

export function policyBackend(
  options: PrepareModelOptions & BackendOptions,
  descriptor: EnvDescriptor,
  { valueHead, label, init }: { valueHead: boolean; label: string; init?: LoadedCheckpoint },
): PolicyBackend {
  if (options.backend === 'builtin') {
    // The model's own chat format (when --model has one), and for a LoRA run the frozen base the adapter states restore onto.
    const chatFormat = init?.chatFormat;
    const lora = builtinLora(options);
    // Restored LoRA policies share one base: the starting policy's (or, on resume, the first
    // restored one's); the policy and the KL / DPO reference are forks of it with their own
    // adapters — not copies of the weights.
    let started: BuiltinPolicy | undefined;
    const restore = sharedBaseRestorer(
      (state) => restoreBuiltinPolicy(state, { spec: modelSpecOf(options), init, lora: lora !== undefined }),
      { holder: () => started },
    );
    return {
      name: 'builtin',
      start: async () => {
        const policy = new BuiltinPolicy({
          model: await prepareModel(options, descriptor, { valueHead, label, init, lora }),
          chatFormat,
        });
        // --model with --warm-start: the SFT warm start on the loaded weights, in their own chat format.
        if (init !== undefined && options.warmStart === true) await warmStartPolicy(policy, options, descriptor, label);
        started = policy;
        return policy;
      },
      restorePolicy: restore,
      // The reference only scores.
      restoreReference: restore,
      close: async () => {},
    };
  }
  return tinkerBackend(options, descriptor, label);
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
