/**
 * Presets for pretrained models, one rule on every backend (`agentrl train|dpo|sft|gateway`):
 * a run that starts from a pretrained model — `--model <folder | file.gguf | pulled name>` with
 * its own chat format on the built-in engine, or `--backend tinker --base-model <hub name>` in its
 * own tokenizer — gets
 *
 *   - no SFT warm start unless `--warm-start` (the scripted-expert warm start is for agentrl's tiny
 *     byte model; a pretrained model already writes text), and no warm-start flag without it;
 *   - the model's own system prompt and the whole conversation (`--system-prompt`, `--history-turns all`);
 *   - its context window from its config (`max_position_embeddings` of config.json, the table
 *     below), never the tiny model's 256;
 *   - a learning rate for LoRA on that model: the table's (tinker-cookbook
 *     `hyperparam_utils.get_lr`, the best LoRA learning rate of its SFT sweep per model), else
 *     the cookbook's earlier formula LR = 5e-5 · 10 · (2000 / hidden)^P, P = 0.0775 for Qwen and
 *     0.781 for Llama and other families (https://tinker-docs.thinkingmachines.ai/supervised-learning/sl-hyperparams);
 *     a full fine-tune of the built-in model takes a tenth (the cookbook's LoRA/full factor, 10).
 *
 * Flags, the config file and `--resume`'s saved config override every value. A byte-model run
 * (agentrl's own checkpoints, `--tokenizer bytes`, the check's tiny random model) keeps the env's
 * preset. `presetTable()` is printed by `agentrl train --help`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { InvalidArgumentError } from '../core/errors.ts';
import { usesByteTemplate } from '../model/checkpoint.ts';
import { hasOwnChatFormat, modelSpecOf } from './model-setup.ts';

export interface ModelPreset {
  /** The short name (`--model` / `--base-model`); the hub name is accepted too. */
  name: string;
  /** Its Hugging Face id: the `base_model` a Tinker server serves it as. */
  hubName: string;
  /** Decides the formula's exponent; 'llama' for every family the cookbook's formula did not name. */
  family: 'llama' | 'qwen';
  hiddenSize: number;
  /** `max_position_embeddings` of its config.json. */
  contextWindow: number;
  /** Adam learning rate for a LoRA on it. */
  loraLearningRate: number;
  /** Where the learning rate comes from. */
  learningRateSource: string;
  /** Where it runs. */
  backends: string;
}

const cookbookSweep = 'tinker-cookbook get_lr (its SFT sweep)';

/** tinker-cookbook's LoRA learning-rate formula (before its sweep table): 5e-5 · 10 · (2000 / hidden)^P. */
export function cookbookLoraLearningRate(family: 'llama' | 'qwen', hiddenSize: number): number {
  return 5e-5 * 10 * (2000 / hiddenSize) ** (family === 'qwen' ? 0.0775 : 0.781);
}

export const modelPresets: readonly ModelPreset[] = [
  {
    name: 'smollm2-135m-instruct',
    hubName: 'HuggingFaceTB/SmolLM2-135M-Instruct',
    family: 'llama',
    hiddenSize: 576,
    contextWindow: 8192,
    loraLearningRate: cookbookLoraLearningRate('llama', 576),
    learningRateSource: 'tinker-cookbook formula (Llama, hidden 576)',
    backends: 'builtin (agentrl models pull), tinker (a SkyRL server started with it)',
  },
  ...(
    [
      ['qwen3-4b-instruct-2507', 'Qwen/Qwen3-4B-Instruct-2507', 'qwen', 2560, 262_144, 1e-3],
      ['qwen3-8b', 'Qwen/Qwen3-8B', 'qwen', 4096, 40_960, 1e-3],
      ['qwen3-30b-a3b-instruct-2507', 'Qwen/Qwen3-30B-A3B-Instruct-2507', 'qwen', 2048, 262_144, 1e-3],
      ['llama-3.2-1b', 'meta-llama/Llama-3.2-1B', 'llama', 2048, 131_072, 1e-3],
      ['llama-3.1-8b-instruct', 'meta-llama/Llama-3.1-8B-Instruct', 'llama', 4096, 131_072, 3e-4],
    ] as const
  ).map(([name, hubName, family, hiddenSize, contextWindow, loraLearningRate]) => ({
    name,
    hubName,
    family,
    hiddenSize,
    contextWindow,
    loraLearningRate,
    learningRateSource: cookbookSweep,
    backends: 'tinker (hosted Tinker or SkyRL); builtin from a local folder of its weights',
  })),
];

/** The preset `name` names (its short name or hub name, any case), or an existing folder named after its hub repo (`./Qwen3-8B`). */
export function findModelPreset(name: string | undefined): ModelPreset | undefined {
  if (name === undefined) return undefined;
  const wanted = name.toLowerCase();
  const folder = existsSync(name) ? basename(name.replace(/[\\/]+$/, '')).toLowerCase() : undefined;
  return modelPresets.find(
    (preset) =>
      preset.name === wanted ||
      preset.hubName.toLowerCase() === wanted ||
      preset.hubName.toLowerCase().split('/').at(-1) === folder,
  );
}

/** What a model folder's config.json says about the preset's numbers (undefined: no such folder or file). */
export function folderModelFacts(
  path: string | undefined,
): { family: 'llama' | 'qwen'; hiddenSize?: number; contextWindow?: number } | undefined {
  if (path === undefined) return undefined;
  const file = join(folderOf(path), 'config.json');
  if (!existsSync(file)) return undefined;
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined; // the model load reports a broken config.json
  }
  const positive = (value: unknown) => (typeof value === 'number' && value > 0 ? value : undefined);
  return {
    family: String(config.model_type ?? '').startsWith('qwen') ? 'qwen' : 'llama',
    hiddenSize: positive(config.hidden_size),
    contextWindow: positive(config.max_position_embeddings),
  };
}

export interface PresetInput {
  backend: string;
  model?: string;
  init?: string;
  baseModel?: string;
  tokenizer?: string;
  loraRank?: number;
}

/** The pretrained model a run starts from, if it does (see the header); undefined for a byte-model run. */
export function pretrainedStart(
  options: PresetInput,
): { name: string; preset?: ModelPreset; facts?: ReturnType<typeof folderModelFacts> } | undefined {
  if (options.backend === 'tinker') {
    if (options.tokenizer === 'bytes' || options.baseModel === undefined) return undefined;
    const source = options.tokenizer ?? options.baseModel;
    const tokenizerFile = join(folderOf(source), 'tokenizer.json');
    if (existsSync(tokenizerFile) && isByteTokenizer(tokenizerFile)) return undefined;
    const facts = folderModelFacts(options.tokenizer) ?? folderModelFacts(options.baseModel);
    return { name: options.baseModel, preset: findModelPreset(options.baseModel), facts };
  }
  const spec = modelSpecOf(options);
  if (spec === undefined || !hasOwnChatFormat(spec)) return undefined;
  return { name: spec, preset: findModelPreset(spec), facts: folderModelFacts(spec) };
}

/**
 * Option defaults for a run from a pretrained model (under the config file and the flags); {} for
 * a byte-model run. `maxSeqLen` is set on the tinker backend only: the built-in engine takes the
 * context from the loaded weights' own config.
 */
export function pretrainedPreset(options: PresetInput): Record<string, unknown> {
  const start = pretrainedStart(options);
  if (start === undefined) {
    // An agentrl byte checkpoint as --model: pure RL from it (no warm start), in the byte template.
    return options.backend === 'builtin' && modelSpecOf(options) !== undefined ? { warmStart: false } : {};
  }
  const { preset, facts } = start;
  const loraRate =
    preset?.loraLearningRate ??
    (facts?.hiddenSize !== undefined ? cookbookLoraLearningRate(facts.family, facts.hiddenSize) : 5e-4);
  const lora = options.backend === 'tinker' || options.loraRank !== undefined;
  const learningRate = lora ? loraRate : loraRate / 10;
  const contextWindow = facts?.contextWindow ?? preset?.contextWindow;
  return {
    warmStart: false,
    systemPrompt: true,
    historyTurns: 'all',
    learningRate,
    sftLearningRate: learningRate,
    ...(options.backend === 'tinker' && contextWindow !== undefined ? { maxSeqLen: contextWindow } : {}),
  };
}

/** The warm start's flags: each is refused on a pretrained run without `--warm-start`. */
const warmStartFlags = ['demonstrations', 'sftSteps', 'sftBatchSize', 'sftLearningRate', 'randomActionRate'] as const;

/** The model-shape flags a loaded model brings itself. */
const shapeFlags = ['vocabSize', 'hiddenSize', 'numLayers', 'numHeads', 'numKvHeads', 'intermediateSize'] as const;

/**
 * Refuses, before any work, what a pretrained run would silently not do: a warm-start flag without
 * `--warm-start`, a model-shape flag with `--model`, a tinker run whose context is unknown.
 * `sources` says where each option came from (resolveOptions): only the user's own are refused.
 */
export function checkPresetOptions(
  options: PresetInput & Record<string, unknown>,
  sources: Record<string, string>,
): void {
  const given = (key: string) => sources[key] === 'the command line' || sources[key]?.startsWith('--config') === true;
  const start = pretrainedStart(options);
  const loaded = options.backend === 'builtin' && modelSpecOf(options) !== undefined;
  if ((start !== undefined || loaded) && options.warmStart !== true) {
    const flag = warmStartFlags.find(given);
    if (flag !== undefined)
      throw new InvalidArgumentError(
        `--${kebab(flag)} configures the SFT warm start, which a run from a pretrained model skips; pass --warm-start too, or drop it`,
        { flag },
      );
  }
  if (loaded) {
    const flag = [...shapeFlags, 'maxSeqLen'].find(given);
    if (flag !== undefined)
      throw new InvalidArgumentError(
        `--${kebab(flag)} sizes a fresh model; --model ${modelSpecOf(options)} brings its own config (its context window included)`,
        { flag },
      );
  }
  // maxSeqLen has a schema default (the tiny model's 256): only a preset, the config file or a flag sizes a pretrained model.
  if (start !== undefined && options.backend === 'tinker' && sources.maxSeqLen === undefined)
    throw new InvalidArgumentError(
      `agentrl does not know the context window of ${start.name}: pass --max-seq-len <tokens>, or a --tokenizer folder holding the model's config.json (known models: ${modelPresets.map((preset) => preset.hubName).join(', ')})`,
      { flag: 'maxSeqLen', baseModel: start.name },
    );
}

/** The preset table, for `agentrl train --help`. */
export function presetTable(): string {
  const rows = modelPresets.map(
    (preset) =>
      `    ${preset.name.padEnd(28)} ${preset.hubName.padEnd(36)} context ${String(preset.contextWindow).padStart(6)}  LoRA lr ${preset.loraLearningRate.toPrecision(3)} (${preset.learningRateSource}); ${preset.backends}`,
  );
  return [
    '  pretrained-model presets (--model <name> on the built-in engine, --backend tinker --base-model <name or hub name>):',
    '  no SFT warm start unless --warm-start, the system prompt and the whole conversation, the context from the',
    "  model's config, a LoRA learning rate (a full fine-tune: a tenth); other pretrained models get the same rule from",
    '  their config.json (src/cli/model-presets.ts)',
    ...rows,
  ].join('\n');
}

/** A tokenizer.json path's folder, or the folder itself. */
function folderOf(path: string): string {
  return existsSync(path) && statSync(path).isFile() ? join(path, '..') : path;
}

function isByteTokenizer(file: string): boolean {
  try {
    return usesByteTemplate(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return false; // loading it reports what is wrong
  }
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
