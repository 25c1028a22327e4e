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
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ChatTemplateError, CheckpointError } from '../core/errors.ts';
import type { ChatFormat } from './chat-format.ts';
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
  return loadTokenizerJson(readJson(join(folder, 'tokenizer.json'), true), { tokenizerConfig: readJson(join(folder, 'tokenizer_config.json'), false) ?? {}, file: join(folder, 'tokenizer.json') });
}

export function loadChatFormat(path: string, options: LoadChatFormatOptions = {}): ChatFormat {
  const folder = modelFolderOf(path);
  const tokenizerConfig = (readJson(join(folder, 'tokenizer_config.json'), false) ?? {}) as Record<string, unknown>;
  const generationConfig = (readJson(join(folder, 'generation_config.json'), false) ?? {}) as Record<string, unknown>;
  const tokenizer = loadTokenizerJson(readJson(join(folder, 'tokenizer.json'), true), { tokenizerConfig, file: join(folder, 'tokenizer.json') });
  const template = chatTemplateOf(folder, tokenizerConfig);

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
  const family: ToolCallFamily = options.toolCallFamily === undefined ? detectToolCallFamily(template) : checkToolCallFamily(options.toolCallFamily);
  return jinjaChatFormat({ name: basename(folder), tokenizer, template, specialTokenStrings, stopTokens: [...stopTokens], toolCallFamily: family });
}

function chatTemplateOf(folder: string, tokenizerConfig: Record<string, unknown>): string {
  const configured = tokenizerConfig.chat_template;
  if (typeof configured === 'string') return configured;
  if (Array.isArray(configured)) {
    const entry = configured.find((item: { name?: unknown }) => item?.name === 'default') ?? configured[0];
    if (typeof entry?.template === 'string') return entry.template;
  }
  const file = join(folder, 'chat_template.jinja');
  if (existsSync(file)) return readFileSync(file, 'utf8');
  throw new ChatTemplateError(`${folder}: no chat template (neither tokenizer_config.json "chat_template" nor chat_template.jinja)`, { folder });
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
