/**
 * The tinker backend of `agentrl train|dpo|sft|gateway`: the run's tokenizer and chat format
 * (`--tokenizer`, or a local `--base-model` folder; a hub name alone is refused), the options
 * `TinkerPolicy.create` gets, and the run's policies (backend-setup.ts `PolicyBackend`) — a LoRA
 * on the server, warm-started when asked, restored into a fresh model, and a KL / DPO reference
 * that is a sampling client of the reference weights (`TinkerPolicy.reference`, the cookbook's
 * `compute_logprobs`), not a second LoRA training run.
 */
import type { ChatFormat } from '../chat/chat-format.ts';
import { hasTokenizerJson, loadChatFormat } from '../chat/model-folder.ts';
import { InvalidArgumentError } from '../core/errors.ts';
import type { EnvDescriptor } from '../envs/index.ts';
import { TinkerPolicy, type TinkerPolicyOptions, type TinkerReference } from '../policy/tinker/index.ts';
import { type BackendOptions, backendSchema, checkBackendOptions, type PolicyBackend } from './backend-setup.ts';
import { defaultTrainModel, type PrepareModelOptions, warmStartPolicy } from './model-setup.ts';
import { checkPresetOptions, findModelPreset, pretrainedPreset } from './model-presets.ts';

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

/**
 * What TinkerPolicy.create gets from the flags: `maxSeqLen` bounds the context (a pretrained
 * model's preset sets it from its config, model-presets.ts; else the built-in model's), a preset's
 * short name becomes its hub name.
 */
export function tinkerPolicyOptions(
  options: BackendOptions & { seed: number; maxSeqLen?: number },
): TinkerPolicyOptions {
  const chatFormat = tinkerChatFormat(options);
  return {
    ...(chatFormat === undefined ? {} : { chatFormat, tokenizer: chatFormat.tokenizer }),
    baseUrl: options.baseUrl,
    baseModel: shortNameOf(options.baseModel)?.hubName ?? options.baseModel ?? '',
    wire: options.tinkerWire,
    rank: options.loraRank ?? 8,
    seed: options.seed,
    lossReduction: options.tinkerLossReduction,
    contextWindow: options.maxSeqLen ?? defaultTrainModel.maxSeqLen,
  };
}

/** The preset `--base-model` names by its short name (a hub name or a server's folder is sent as given). */
function shortNameOf(baseModel: string | undefined) {
  const preset = findModelPreset(baseModel);
  return preset !== undefined && preset.name === baseModel?.toLowerCase() ? preset : undefined;
}

/** The tinker run's policies (see the header). */
export function tinkerBackend(
  options: PrepareModelOptions & BackendOptions,
  descriptor: EnvDescriptor,
  label: string,
): PolicyBackend {
  const created: TinkerPolicy[] = [];
  const references: TinkerReference[] = [];
  const create = async (): Promise<TinkerPolicy> => {
    const policy = await TinkerPolicy.create(tinkerPolicyOptions(options));
    created.push(policy);
    return policy;
  };
  // The LoRA run start() made, until a restore takes it over.
  let started: TinkerPolicy | undefined;
  return {
    name: 'tinker',
    start: async () => {
      const policy = await create();
      started = policy;
      console.error(
        `${label}: tinker model ${policy.modelId} on ${policy.client.baseUrl} (base ${options.baseModel}, LoRA rank ${options.loraRank})`,
      );
      await warmStartPolicy(policy, options, descriptor, label);
      return policy;
    },
    // The first restore loads into the LoRA run start() made (a run's one policy, or the first role);
    // every later one is its own training client (another role, a league snapshot), never a shared one.
    restorePolicy: async (state) => {
      const policy = started ?? (await create());
      started = undefined;
      await policy.loadState(state);
      return policy;
    },
    // The reference is a sampling client of the state's weights (the cookbook's), made the first time it scores (many algorithms never ask).
    restoreReference: async (state) => {
      let reference: Promise<TinkerReference> | undefined;
      let made: TinkerReference | undefined;
      let setupMs = 0;
      const ready = () =>
        (reference ??= (async () => {
          const started = performance.now();
          const scorer = await TinkerPolicy.reference(tinkerPolicyOptions(options), state);
          references.push(scorer);
          setupMs = performance.now() - started;
          made = scorer;
          return scorer;
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
      await Promise.allSettled([...created, ...references].map((policy) => policy.close()));
    },
  };
}

/** The gateway's flags for the tinker backend. */
export type TinkerGatewayOptions = Pick<
  BackendOptions,
  'backend' | 'baseUrl' | 'baseModel' | 'tokenizer' | 'loraRank' | 'tinkerLossReduction' | 'tinkerWire'
> & { seed: number; maxSeqLen?: number };

/**
 * `agentrl gateway --backend tinker`: a TinkerPolicy as the gateway's sampler — the base model, or
 * the LoRA a `tinker-checkpoint.json` folder names (restored into a fresh model) — with the
 * preset's context (model-presets.ts); refused before any request as train's flags are.
 */
export async function tinkerGatewaySampler(options: TinkerGatewayOptions, checkpoint: string | undefined) {
  const flags = backendSchema.parse({ ...options, backend: 'tinker' });
  checkBackendOptions({ ...flags, algo: 'grpo', entropyCoef: 0, maxGradNorm: 0 });
  const preset = pretrainedPreset(flags);
  const maxSeqLen = options.maxSeqLen ?? (preset.maxSeqLen as number | undefined);
  checkPresetOptions({ ...flags, maxSeqLen }, maxSeqLen === undefined ? {} : { maxSeqLen: 'the preset or a flag' });
  const policy = await TinkerPolicy.create(tinkerPolicyOptions({ ...flags, seed: options.seed, maxSeqLen }));
  try {
    if (checkpoint !== undefined) await policy.load(checkpoint);
  } catch (error) {
    await policy.close();
    throw error;
  }
  return {
    sampler: policy,
    tokenizer: policy.tokenizer,
    chatFormat: policy.chatFormat,
    source: checkpoint ?? flags.baseModel ?? 'tinker',
    close: () => policy.close(),
  };
}
