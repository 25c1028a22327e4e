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
 * PPO (no value head), an entropy bonus, gradient clipping (the `tinker` backend defaults
 * `maxGradNorm` to 0 and `loraRank` to 8: `backendPreset`), `--model`/`--init` (built-in weights),
 * the built-in LoRA's alpha/dropout/targets.
 *
 * LoRA on the built-in model: `--model <source> --lora-rank 16 [--lora-alpha 32 --lora-dropout 0
 * --lora-targets q_proj,v_proj]` trains adapters on the frozen weights of --model (model/lora.ts);
 * only the adapters and their moments are in the run's resumable state, so resuming and the KL
 * reference restore them onto the base weights reloaded from --model (the run's saved config
 * names it). Refused: --lora-rank without --model (nothing to adapt), a critic (--algo ppo: a
 * LoRA run trains no value head), --lora-alpha/-dropout/-targets without --lora-rank.
 */
import { z } from 'zod';
import { InvalidArgumentError, UnknownNameError } from '../core/errors.ts';
import type { EnvDescriptor } from '../envs/index.ts';
import type { LoadedCheckpoint } from '../model/checkpoint.ts';
import { loraModuleWeights, type LoraConfigInput, type LoraModule } from '../model/lora.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { parseBuiltinState, restoreBuiltinModel } from '../policy/builtin-state.ts';
import { lossReductions, TinkerPolicy, type TinkerPolicyOptions } from '../policy/tinker/index.ts';
import type { ReferencePolicy, TrainablePolicy } from '../policy/types.ts';
import { algorithmPresets, type AlgorithmName } from '../train/algorithm-presets.ts';
import type { ChatFormat } from '../chat/chat-format.ts';
import { hasTokenizerJson, loadChatFormat } from '../chat/model-folder.ts';
import {
  checkSameModel,
  defaultTrainModel,
  modelSpecOf,
  prepareModel,
  warmStartPolicy,
  type PrepareModelOptions,
} from './model-setup.ts';

export const backendNames = ['builtin', 'tinker'] as const;

export const builtinEngines = ['auto', 'jax', 'onnx'] as const;

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
  engine: z
    .enum(builtinEngines)
    .default('auto')
    .describe(
      'builtin: the engine that samples, scores and trains — jax (jax-js on wasm), onnx (onnxruntime: sampling, scoring and the LoRA step; a full fine-tune trains on jax), auto (onnx for a LoRA run without dropout, else jax)',
    ),
  tinkerLossReduction: z
    .enum(lossReductions)
    .default('sum')
    .describe(
      "tinker: how the server reduces the per-token loss ('sum' hosted Tinker, 'sequence-mean' SkyRL tx 0.3.0)",
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

/**
 * Which engine each part of the built-in policy runs on: onnxruntime is 10–20× faster than jax-js
 * at a real model's size (docs/onnx-engine.md) but trains LoRA adapters only, without dropout.
 */
export function builtinEngine(options: LoraFlags & Pick<BackendOptions, 'engine'>): {
  inference: 'jax' | 'onnx';
  training: 'jax' | 'onnx';
} {
  const loraOnOnnx = options.loraRank !== undefined && (options.loraDropout ?? 0) === 0;
  const engine = options.engine === 'auto' ? (loraOnOnnx ? 'onnx' : 'jax') : options.engine;
  if (engine === 'jax') return { inference: 'jax', training: 'jax' };
  return { inference: 'onnx', training: loraOnOnnx ? 'onnx' : 'jax' };
}

/** The built-in backend's LoRA refusals (see the header). */
function checkBuiltinLora(options: LoraFlags & { algo: AlgorithmName; model?: string; init?: string }): void {
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
  if (algorithmPresets[options.algo].valueHead) {
    throw new InvalidArgumentError(
      `--algo ${options.algo} trains a critic (a value head), which a LoRA run does not train; use grpo, dr-grpo, dapo, gspo, cispo, rloo or reinforce++, or drop --lora-rank`,
      { algo: options.algo },
    );
  }
  builtinLora(options);
}

/** Refuses, before any run is created, a backend setting that cannot run. */
export function checkBackendOptions(
  options: BackendOptions & {
    algo: AlgorithmName;
    entropyCoef: number;
    maxGradNorm: number;
    temperature?: number;
    model?: string;
    init?: string;
  },
): void {
  if (options.backend !== 'tinker') {
    for (const flag of ['baseUrl', 'baseModel', 'tokenizer'] as const) {
      if (options[flag] !== undefined)
        throw new InvalidArgumentError(`--${kebab(flag)} is a tinker backend flag; pass --backend tinker too`, {
          flag,
        });
    }
    checkBuiltinLora(options);
    return;
  }
  for (const flag of ['loraAlpha', 'loraDropout', 'loraTargets'] as const) {
    if (options[flag] !== undefined)
      throw new InvalidArgumentError(
        `--${kebab(flag)} sets up the built-in LoRA; the tinker backend takes --lora-rank only`,
        { flag },
      );
  }
  if (options.engine !== 'auto')
    throw new InvalidArgumentError(
      `--engine ${options.engine} picks the built-in backend's engine; the tinker server runs its own`,
      { engine: options.engine },
    );
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
  if (options.maxGradNorm !== 0)
    throw new InvalidArgumentError(
      `the tinker backend cannot clip the gradient norm; set --max-grad-norm 0 (got ${options.maxGradNorm})`,
      { maxGradNorm: options.maxGradNorm },
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

/** `--tokenizer bytes`: train in agentrl's byte tokenizer and template (a model that was trained with it). */
export const byteTokenizerName = 'bytes';

/**
 * The tinker run's tokenizer and chat format: `--tokenizer`, else `--base-model` when it is a local
 * folder holding tokenizer.json; undefined for `--tokenizer bytes`. A hub name with neither is
 * refused: training it on agentrl's byte tokenizer would run, exit 0 and teach it nothing.
 */
export function tinkerChatFormat(options: Pick<BackendOptions, 'baseModel' | 'tokenizer'>): ChatFormat | undefined {
  if (options.tokenizer === byteTokenizerName) return undefined;
  const baseModel = options.baseModel ?? '';
  const source = options.tokenizer ?? (hasTokenizerJson(baseModel) ? baseModel : undefined);
  if (source === undefined)
    throw new InvalidArgumentError(
      `--base-model ${baseModel} is not a local folder holding tokenizer.json, so agentrl does not know its tokenizer: pass --tokenizer <the model's folder or tokenizer.json> (download its tokenizer.json, tokenizer_config.json and generation_config.json), or --tokenizer ${byteTokenizerName} for a model trained with agentrl's byte tokenizer`,
      { baseModel, flag: 'tokenizer' },
    );
  return loadChatFormat(source);
}

/** What TinkerPolicy.create gets from the flags (`maxSeqLen`, default the built-in model's, bounds the context). */
export function tinkerPolicyOptions(
  options: BackendOptions & { seed: number; maxSeqLen?: number },
): TinkerPolicyOptions {
  const chatFormat = tinkerChatFormat(options);
  return {
    ...(chatFormat === undefined ? {} : { chatFormat, tokenizer: chatFormat.tokenizer }),
    baseUrl: options.baseUrl,
    baseModel: options.baseModel!,
    rank: options.loraRank ?? 8,
    seed: options.seed,
    lossReduction: options.tinkerLossReduction,
    contextWindow: options.maxSeqLen ?? defaultTrainModel.maxSeqLen,
  };
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
  {
    spec,
    init,
    lora,
    engines,
  }: { spec?: string; init?: LoadedCheckpoint; lora: boolean; engines: ReturnType<typeof builtinEngine> },
): Promise<BuiltinPolicy> {
  const state = parseBuiltinState(bytes);
  if (init !== undefined && spec !== undefined) checkSameModel(spec, init.config, state.modelConfig);
  const model = await restoreBuiltinModel(state, { baseParams: lora ? init?.params : undefined });
  return new BuiltinPolicy({ model, chatFormat: init?.chatFormat, ...engines });
}

export function policyBackend(
  options: PrepareModelOptions & BackendOptions,
  descriptor: EnvDescriptor,
  { valueHead, label, init }: { valueHead: boolean; label: string; init?: LoadedCheckpoint },
): PolicyBackend {
  if (options.backend === 'builtin') {
    // The model's own chat format (when --model has one), and for a LoRA run the frozen base the adapter states restore onto.
    const chatFormat = init?.chatFormat;
    const lora = builtinLora(options);
    const engine = builtinEngine(options);
    const restore = (state: Uint8Array, engines: typeof engine) =>
      restoreBuiltinPolicy(state, { spec: modelSpecOf(options), init, lora: lora !== undefined, engines });
    return {
      name: 'builtin',
      start: async () =>
        new BuiltinPolicy({
          model: await prepareModel(options, descriptor, { valueHead, label, init, lora }),
          chatFormat,
          ...engine,
        }),
      restorePolicy: (state) => restore(state, engine),
      // The reference only scores.
      restoreReference: (state) => restore(state, { inference: engine.inference, training: 'jax' }),
      close: async () => {},
    };
  }
  const created: TinkerPolicy[] = [];
  const create = async (): Promise<TinkerPolicy> => {
    const policy = await TinkerPolicy.create(tinkerPolicyOptions(options));
    created.push(policy);
    return policy;
  };
  let live: TinkerPolicy | undefined;
  return {
    name: 'tinker',
    start: async () => {
      live = await create();
      console.error(
        `${label}: tinker model ${live.modelId} on ${live.client.baseUrl} (base ${options.baseModel}, LoRA rank ${options.loraRank})`,
      );
      await warmStartPolicy(live, options, descriptor, label);
      return live;
    },
    // The policy resumes in the LoRA run this process already holds, when it has one.
    restorePolicy: async (state) => {
      live ??= await create();
      await live.loadState(state);
      return live;
    },
    // The reference is a second LoRA run, made the first time it scores (many algorithms never ask).
    restoreReference: async (state) => {
      let reference: Promise<TinkerPolicy> | undefined;
      let made: TinkerPolicy | undefined;
      let setupMs = 0;
      const ready = () =>
        (reference ??= (async () => {
          const started = performance.now();
          const policy = await create();
          await policy.loadState(state);
          setupMs = performance.now() - started;
          made = policy;
          return policy;
        })());
      // Its server time (creating and loading the run, then its forward calls) is part of the time split.
      return {
        logprobs: async (batch) => (await ready()).logprobs(batch),
        get times() {
          return { setup: setupMs, ...(made?.times ?? {}) };
        },
      };
    },
    close: async () => {
      await Promise.allSettled(created.map((policy) => policy.close()));
    },
  };
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
