/**
 * Checkpoints as Hugging Face model folders, loadable by `transformers` as well as by agentrl:
 *
 *   config.json             HF fields (LlamaForCausalLM / Qwen2ForCausalLM) + an `agentrl` block
 *                           { format, modelConfig (the full ModelConfig), extra }
 *   model.safetensors       float32 tensors under HF names ([out, in] linear weights)
 *   tokenizer.json          the tokenizer (byte tokenizer: BPE with 256 byte tokens, no merges)
 *   tokenizer_config.json   special tokens and the Jinja chat template
 *   generation_config.json  bos / eos (= <|end|>) / pad ids
 *
 * A model with its own chat format (a pretrained model's tokenizer and template, `chatFiles` =
 * `ChatFormat.files`) gets ITS tokenizer.json, tokenizer_config.json (with its chat_template) and
 * generation_config.json instead, so the checkpoint reloads in the same format: `loadCheckpoint`
 * returns `chatFormat` for a folder whose tokenizer.json is a model's own (not the byte template's
 * `<|user|>`/`<|assistant|>` tokens) and has a chat template. Byte-model checkpoints are unchanged.
 *
 * Saving is atomic: everything is written (and fsynced) into a sibling temp folder that is then
 * renamed into place, so a crash leaves either the old checkpoint or the new one, never a mix.
 * (When replacing an existing checkpoint there is a moment between two renames when `dir` is
 * absent; the complete old and new folders both exist on disk then.)
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ChatTemplateError, CheckpointError, InvalidArgumentError } from '../core/errors.ts';
import { modelConfigSchema, type HostParams, type HostTensor, type ModelConfig } from './config.ts';
import { chatTemplateJinja } from '../chat/chat-template.ts';
import { fromHfConfig, fromHfTensors, toHfConfig, toHfTensors, type HfArchitecture } from './hf-config.ts';
import { parseSafetensors, serializeSafetensors, toFloat32 } from './safetensors.ts';
import { byteTokenizer, specialTokenText, type SpecialTokens, type Tokenizer } from '../chat/tokenizer.ts';
import { loadHfTokenizer } from '../chat/hf-tokenizer.ts';
import type { ChatFormat, ChatFormatFiles } from '../chat/chat-format.ts';
import { chatFormatFromFiles, readChatFormatFiles } from '../chat/model-folder.ts';
import { loadTokenizerJson } from '../chat/tokenizer-json.ts';

/** Version of the `agentrl` block in config.json. */
export const checkpointFormat = 1;

export interface SaveCheckpointOptions {
  config: ModelConfig;
  params: HostParams;
  /** Default: the built-in byte tokenizer. */
  tokenizer?: Tokenizer;
  /** Default: Qwen2ForCausalLM when the config has q/k/v biases, else LlamaForCausalLM. */
  architecture?: HfArchitecture;
  /** Any JSON-serializable data to keep with the weights (step, run id, …). */
  extra?: Record<string, unknown>;
  /** The model's own tokenizer files (`ChatFormat.files`), written instead of the byte tokenizer's; `tokenizer` must be theirs. */
  chatFiles?: ChatFormatFiles;
  /** More files in one subfolder each (`adapter/adapter_config.json`: a LoRA model's PEFT adapter), part of the same atomic save. */
  subfolderFiles?: readonly (readonly [string, Uint8Array | string])[];
}

export interface LoadedCheckpoint {
  config: ModelConfig;
  params: HostParams;
  /** The tokenizer from tokenizer.json (the shared `byteTokenizer` when it is the byte tokenizer); undefined if the folder has none. */
  tokenizer: Tokenizer | undefined;
  /** The model's own chat format, when tokenizer.json is a model's own and the folder has a chat template (then `tokenizer` is its tokenizer). */
  chatFormat?: ChatFormat;
  extra: Record<string, unknown>;
}

/** Writes a checkpoint folder atomically. An existing `dir` is replaced only if it is empty or a checkpoint (has config.json). */
export async function saveCheckpoint(dir: string, options: SaveCheckpointOptions): Promise<void> {
  const {
    config,
    params,
    tokenizer = byteTokenizer,
    architecture,
    extra = {},
    chatFiles,
    subfolderFiles = [],
  } = options;
  for (const [name] of subfolderFiles) checkSubfolderFileName(name);
  if (tokenizer.vocabSize > config.vocabSize) {
    throw new InvalidArgumentError(
      `tokenizer has ${tokenizer.vocabSize} ids but config.vocabSize is ${config.vocabSize}`,
      {
        tokenizerVocabSize: tokenizer.vocabSize,
        vocabSize: config.vocabSize,
      },
    );
  }
  const special = tokenizer.specialTokens;
  const tokenIds = { bosTokenId: special.bos, eosTokenId: special.end, padTokenId: special.pad };
  const hfTensors = toHfTensors(config, params);
  const files: [string, Uint8Array | string][] = [
    [
      'config.json',
      json({
        ...toHfConfig(config, { architecture, tokenIds }),
        agentrl: { format: checkpointFormat, modelConfig: config, extra },
      }),
    ],
    ['model.safetensors', serializeSafetensors(hfTensors, { format: 'pt' })],
    ...(chatFiles === undefined
      ? ([
          ['tokenizer.json', json(tokenizer.toTokenizerJson())],
          ['tokenizer_config.json', json(tokenizerConfig(tokenizer, config))],
          [
            'generation_config.json',
            json({ bos_token_id: special.bos, eos_token_id: special.end, pad_token_id: special.pad }),
          ],
        ] as [string, string][])
      : ([
          ['tokenizer.json', JSON.stringify(chatFiles.tokenizerJson)],
          ['tokenizer_config.json', json(chatFiles.tokenizerConfig)],
          ['generation_config.json', json(chatFiles.generationConfig)],
        ] as [string, string][])),
  ];

  await refuseToClobber(dir);
  await mkdir(dirname(dir), { recursive: true });
  const suffix = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const temp = join(dirname(dir), `.${basename(dir)}.tmp-${suffix}`);
  await mkdir(temp);
  try {
    for (const [name, data] of files) await writeAndSync(join(temp, name), data);
    const subfolders = new Set(subfolderFiles.map(([name]) => dirname(name)));
    for (const folder of subfolders) await mkdir(join(temp, folder));
    for (const [name, data] of subfolderFiles) await writeAndSync(join(temp, name), data);
    for (const folder of subfolders) await syncDirectory(join(temp, folder));
    await syncDirectory(temp);
    if (await exists(dir)) {
      const old = join(dirname(dir), `.${basename(dir)}.old-${suffix}`);
      await rename(dir, old);
      await rename(temp, dir);
      await rm(old, { recursive: true, force: true });
    } else {
      await rename(temp, dir);
    }
    await syncDirectory(dirname(dir));
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw new CheckpointError(`${dir}: saving failed (${(error as Error).message})`, { dir });
  }
}

/** Reads a checkpoint folder written by `saveCheckpoint` or a HF Llama/Qwen2 model folder (float weights). */
export async function loadCheckpoint(dir: string): Promise<LoadedCheckpoint> {
  const configFile = join(dir, 'config.json');
  const hfConfig = await readJson(configFile);
  if (typeof hfConfig !== 'object' || hfConfig === null || Array.isArray(hfConfig)) {
    throw new CheckpointError(
      `${configFile}: holds ${JSON.stringify(hfConfig)}, not a model config object; point at a checkpoint folder written by agentrl or a Hugging Face model folder`,
      { file: configFile },
    );
  }
  const agentrl = (hfConfig as { agentrl?: { modelConfig?: unknown; extra?: Record<string, unknown> } }).agentrl;
  const tensors = await readModelTensors(dir);
  let config: ModelConfig;
  if (agentrl?.modelConfig !== undefined) {
    const parsed = modelConfigSchema.safeParse(agentrl.modelConfig);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
      throw new CheckpointError(`${configFile}: agentrl.modelConfig is invalid (${issues})`, { file: configFile });
    }
    config = parsed.data;
  } else {
    config = { ...fromHfConfig(hfConfig, { file: configFile }), valueHead: tensors.has('v_head.summary.weight') };
  }
  const params = fromHfTensors(config, tensors, { file: join(dir, 'model.safetensors') });

  const tokenizerFile = join(dir, 'tokenizer.json');
  if (!(await exists(tokenizerFile))) return { config, params, tokenizer: undefined, extra: agentrl?.extra ?? {} };
  const tokenizerJson = await readJson(tokenizerFile);
  if (isDeepStrictEqual(tokenizerJson, byteTokenizer.toTokenizerJson()))
    return { config, params, tokenizer: byteTokenizer, extra: agentrl?.extra ?? {} };
  if (usesByteTemplate(tokenizerJson))
    return {
      config,
      params,
      tokenizer: loadHfTokenizer(tokenizerJson, { file: tokenizerFile }),
      extra: agentrl?.extra ?? {},
    };
  return { config, params, ...modelTokenizerOf(dir, tokenizerJson, tokenizerFile), extra: agentrl?.extra ?? {} };
}

/** A tokenizer.json that holds agentrl's byte-template role tokens (the byte tokenizer, or a custom BPE for the byte template). */
export function usesByteTemplate(tokenizerJson: unknown): boolean {
  const added = (tokenizerJson as { added_tokens?: { content?: unknown }[] }).added_tokens;
  const contents = new Set(Array.isArray(added) ? added.map((token) => token?.content) : []);
  return [specialTokenText.end, specialTokenText.user, specialTokenText.assistant].every((content) =>
    contents.has(content),
  );
}

/** A model's own tokenizer, with its chat format when the folder has a chat template. */
function modelTokenizerOf(
  dir: string,
  tokenizerJson: unknown,
  file: string,
): { tokenizer: Tokenizer; chatFormat?: ChatFormat } {
  const files = readChatFormatFilesIfTemplated(dir);
  if (files === undefined) {
    const tokenizerConfig = existsSync(join(dir, 'tokenizer_config.json'))
      ? (JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>)
      : {};
    return { tokenizer: loadTokenizerJson(tokenizerJson, { tokenizerConfig, file }) };
  }
  const chatFormat = chatFormatFromFiles(files, { name: basename(resolve(dir)), file });
  return { tokenizer: chatFormat.tokenizer, chatFormat };
}

function readChatFormatFilesIfTemplated(dir: string): ChatFormatFiles | undefined {
  try {
    return readChatFormatFiles(dir);
  } catch (error) {
    if (error instanceof ChatTemplateError) return undefined;
    throw error;
  }
}

/** Writes a file atomically: temp file in the same folder, fsync, rename. */
export async function writeFileAtomic(path: string, data: Uint8Array | string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await writeAndSync(temp, data);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw new CheckpointError(`${path}: writing failed (${(error as Error).message})`, { file: path });
  }
}

function tokenizerConfig(tokenizer: Tokenizer, config: ModelConfig): Record<string, unknown> {
  const names = Object.keys(tokenizer.specialTokens) as (keyof SpecialTokens)[];
  const addedTokensDecoder: Record<string, unknown> = {};
  for (const name of [...names].sort((a, b) => tokenizer.specialTokens[a] - tokenizer.specialTokens[b])) {
    addedTokensDecoder[String(tokenizer.specialTokens[name])] = {
      content: specialTokenText[name],
      lstrip: false,
      normalized: false,
      rstrip: false,
      single_word: false,
      special: true,
    };
  }
  return {
    tokenizer_class: 'PreTrainedTokenizerFast',
    bos_token: specialTokenText.bos,
    eos_token: specialTokenText.end,
    pad_token: specialTokenText.pad,
    unk_token: null,
    additional_special_tokens: [
      specialTokenText.system,
      specialTokenText.user,
      specialTokenText.assistant,
      specialTokenText.tool,
    ],
    added_tokens_decoder: addedTokensDecoder,
    add_bos_token: false,
    add_eos_token: false,
    clean_up_tokenization_spaces: false,
    model_max_length: config.maxSeqLen,
    chat_template: chatTemplateJinja,
  };
}

/** model.safetensors, or the shards named by model.safetensors.index.json. */
async function readModelTensors(dir: string): Promise<Map<string, HostTensor>> {
  const single = join(dir, 'model.safetensors');
  const index = join(dir, 'model.safetensors.index.json');
  let files: string[];
  if (await exists(single)) files = [single];
  else if (await exists(index)) {
    const weightMap = ((await readJson(index)) as { weight_map?: Record<string, string> }).weight_map;
    if (typeof weightMap !== 'object' || weightMap === null)
      throw new CheckpointError(`${index}: no weight_map`, { file: index });
    files = [...new Set(Object.values(weightMap))].sort().map((name) => join(dir, name));
  } else {
    throw new CheckpointError(`${dir}: no model.safetensors or model.safetensors.index.json`, { dir });
  }
  const tensors = new Map<string, HostTensor>();
  for (const file of files) {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(file);
    } catch (error) {
      throw new CheckpointError(`${file}: cannot read (${(error as Error).message})`, { file });
    }
    for (const [name, tensor] of parseSafetensors(bytes, { file }).tensors) {
      tensors.set(name, { shape: tensor.shape, data: toFloat32(tensor) });
    }
  }
  return tensors;
}

async function refuseToClobber(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return; // absent (or not a folder: the rename will report it)
  }
  if (entries.length > 0 && !entries.includes('config.json')) {
    throw new CheckpointError(`${dir}: exists and is not a checkpoint (no config.json); refusing to replace it`, {
      dir,
    });
  }
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CheckpointError(`${file}: cannot read (${(error as Error).message})`, { file });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CheckpointError(`${file}: invalid JSON (${(error as Error).message})`, { file });
  }
}

/** `folder/file`: one subfolder level, plain names (no `..`, no absolute path, no clash with the top-level files). */
function checkSubfolderFileName(name: string): void {
  const parts = name.split('/');
  if (parts.length !== 2 || parts.some((part) => part === '' || part === '.' || part === '..' || part.includes('\\')))
    throw new InvalidArgumentError(`saveCheckpoint: subfolder file "${name}" is not folder/file`, { name });
}

async function writeAndSync(path: string, data: Uint8Array | string): Promise<void> {
  const handle = await open(path, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncDirectory(path: string): Promise<void> {
  try {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // fsync on a directory is not supported everywhere (Windows); the renames are still atomic.
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
