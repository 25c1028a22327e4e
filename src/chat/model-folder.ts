/**
 * The model's chat protocol from a Hugging Face model folder (or the path of its tokenizer.json):
 *
 *   tokenizer.json          the tokenizer (required)
 *   tokenizer_config.json   bos/eos/pad token names and `chat_template` (a string, or a list of
 *                           `{name, template}` whose `default` is used)
 *   chat_template.jinja     the template, when transformers saved it beside the config instead
 *   generation_config.json  `eos_token_id` (a number or a list): the stop tokens
 *
 * Stop tokens: generation_config's eos ids, the tokenizer_config eos token and the end-of-turn
 * token (`<|im_end|>` / `<|eot_id|>`) — all that exist. Without any template the folder cannot
 * give a ChatFormat (a ChatTemplateError says which files were read).
 *
 * `readChatFormatFiles` + `chatFormatFromFiles` are the two halves of `loadChatFormat`: the second
 * also takes a GGUF's files (model/gguf-tokenizer.ts) or a checkpoint's, and the format it makes
 * keeps them (`ChatFormat.files`) for the checkpoints of a policy that speaks it.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ChatTemplateError, CheckpointError } from '../core/errors.ts';
import type { ChatFormat, ChatFormatFiles } from './chat-format.ts';
import { jinjaChatFormat } from './jinja-chat-format.ts';
import { loadTokenizerJson, tokenName, type ModelTokenizer } from './tokenizer-json.ts';
import { checkToolCallFamily, detectToolCallFamily, type ToolCallFamily } from './tool-call-format.ts';

export interface LoadChatFormatOptions {
  /** Override the detected tool-call family (smollm2, qwen, llama3). */
  toolCallFamily?: string;
}

/** The folder a path names: itself, or the folder of a tokenizer.json file. */
export function modelFolderOf(path: string): string {
  return existsSync(path) && statSync(path).isFile() ? dirname(path) : path;
}

/** True when `path` is a folder holding tokenizer.json, or a tokenizer.json file. */
export function hasTokenizerJson(path: string): boolean {
  return existsSync(join(modelFolderOf(path), 'tokenizer.json'));
}

export function loadModelTokenizer(path: string): ModelTokenizer {
  const folder = modelFolderOf(path);
  return loadTokenizerJson(readJson(join(folder, 'tokenizer.json'), true), {
    tokenizerConfig: readJson(join(folder, 'tokenizer_config.json'), false) ?? {},
    file: join(folder, 'tokenizer.json'),
  });
}

export function loadChatFormat(path: string, options: LoadChatFormatOptions = {}): ChatFormat {
  const folder = modelFolderOf(path);
  return chatFormatFromFiles(readChatFormatFiles(folder), {
    ...options,
    name: basename(folder),
    file: join(folder, 'tokenizer.json'),
  });
}

/** tokenizer.json, tokenizer_config.json (with the template of chat_template.jinja inlined) and generation_config.json of a folder. */
export function readChatFormatFiles(path: string): ChatFormatFiles {
  const folder = modelFolderOf(path);
  const tokenizerJson = readJson(join(folder, 'tokenizer.json'), true) as Record<string, unknown>;
  const tokenizerConfig = { ...(readJson(join(folder, 'tokenizer_config.json'), false) ?? {}) };
  if (chatTemplateIn(tokenizerConfig) === undefined) {
    const file = join(folder, 'chat_template.jinja');
    if (!existsSync(file))
      throw new ChatTemplateError(
        `${folder}: no chat template (neither tokenizer_config.json "chat_template" nor chat_template.jinja)`,
        { folder },
      );
    tokenizerConfig.chat_template = readFileSync(file, 'utf8');
  }
  return {
    tokenizerJson,
    tokenizerConfig,
    generationConfig: readJson(join(folder, 'generation_config.json'), false) ?? {},
  };
}

/** A model's chat format from its files (a folder's, a GGUF's metadata's, a checkpoint's); the format keeps them (`files`). */
export function chatFormatFromFiles(
  files: ChatFormatFiles,
  options: LoadChatFormatOptions & { name?: string; file?: string } = {},
): ChatFormat {
  const { tokenizerConfig, generationConfig } = files;
  const name = options.name ?? 'model';
  const tokenizer = loadTokenizerJson(files.tokenizerJson, { tokenizerConfig, file: options.file ?? 'tokenizer.json' });
  const template = chatTemplateIn(tokenizerConfig);
  if (template === undefined)
    throw new ChatTemplateError(`${name}: tokenizer_config.json has no "chat_template"`, { name });

  const stopTokens = new Set<number>();
  const eosIds = generationConfig.eos_token_id;
  for (const id of Array.isArray(eosIds) ? eosIds : [eosIds]) if (Number.isInteger(id)) stopTokens.add(id as number);
  const eos = tokenName(tokenizerConfig.eos_token);
  for (const content of [eos, '<|im_end|>', '<|eot_id|>']) {
    const id = content === undefined ? undefined : tokenizer.tokenId(content);
    if (id !== undefined) stopTokens.add(id);
  }
  const specialTokenStrings: Record<string, string> = {};
  for (const key of ['bos_token', 'eos_token', 'pad_token', 'unk_token']) {
    const content = tokenName(tokenizerConfig[key]);
    if (content !== undefined) specialTokenStrings[key] = content;
  }
  const family: ToolCallFamily =
    options.toolCallFamily === undefined ? detectToolCallFamily(template) : checkToolCallFamily(options.toolCallFamily);
  return jinjaChatFormat({
    name,
    tokenizer,
    template,
    specialTokenStrings,
    stopTokens: [...stopTokens],
    toolCallFamily: family,
    files,
  });
}

/** `chat_template`: a string, or a list of `{name, template}` whose `default` (else the first) is used. */
function chatTemplateIn(tokenizerConfig: Record<string, unknown>): string | undefined {
  const configured = tokenizerConfig.chat_template;
  if (typeof configured === 'string') return configured;
  if (Array.isArray(configured)) {
    const entry = configured.find((item: { name?: unknown }) => item?.name === 'default') ?? configured[0];
    if (typeof entry?.template === 'string') return entry.template;
  }
  return undefined;
}

function readJson(file: string, required: true): unknown;
function readJson(file: string, required: false): Record<string, unknown> | undefined;
function readJson(file: string, required: boolean): unknown {
  if (!existsSync(file)) {
    if (required) throw new CheckpointError(`${file} does not exist`, { file });
    return undefined;
  }
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CheckpointError(`${file}: not valid JSON: ${(error as Error).message}`, { file });
  }
}
