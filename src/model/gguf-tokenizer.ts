/**
 * A GGUF's tokenizer (`tokenizer.ggml.*` metadata) and chat template (`tokenizer.chat_template`) as
 * the Hugging Face files src/chat reads: tokenizer.json, tokenizer_config.json,
 * generation_config.json. Only byte-level BPE (`tokenizer.ggml.model` "gpt2") is supported, with
 * the pre-tokenizer `tokenizer.ggml.pre` names (llama.cpp's llama-vocab.cpp):
 *
 *   smollm, gpt2, default   ByteLevel with GPT-2's own regex (what SmolLM2's tokenizer.json holds)
 *   qwen2                   Split(Qwen2's regex) + ByteLevel without regex, NFC normalizer
 *   llama-bpe               Split(Llama-3's regex) + ByteLevel without regex
 *
 * Control tokens (token_type 3) become special added tokens, as HF's converter makes them.
 * (scripts/interop/chat/reference.py builds the same tokenizer.json in Python for check:chat.)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError } from '../core/errors.ts';
import { ggufMetadata, type GgufFile, type GgufValue } from './gguf.ts';

const qwen2Split = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
const llama3Split = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
export const ggufPreTokenizers = ['smollm', 'gpt2', 'default', 'qwen2', 'llama-bpe'] as const;

export interface GgufTokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  generationConfig: Record<string, unknown>;
}

export function ggufTokenizerFiles(gguf: GgufFile): GgufTokenizerFiles {
  const file = gguf.file;
  const model = String(ggufMetadata(gguf, 'tokenizer.ggml.model'));
  if (model !== 'gpt2')
    throw new CheckpointError(
      `${file}: tokenizer.ggml.model "${model}" is not supported; supported: gpt2 (byte-level BPE)`,
      { file, model },
    );
  const tokens = stringList(gguf, 'tokenizer.ggml.tokens');
  return { tokenizerJson: tokenizerJsonOf(gguf, tokens), ...tokenizerConfigsOf(gguf, tokens) };
}

const byteLevel = (useRegex: boolean) => ({
  type: 'ByteLevel',
  add_prefix_space: false,
  trim_offsets: true,
  use_regex: useRegex,
});
const split = (pattern: string) => ({
  type: 'Split',
  pattern: { Regex: pattern },
  behavior: 'Isolated',
  invert: false,
});

/** tokenizer.ggml.pre → the tokenizer.json normalizer and pre-tokenizer that Hugging Face uses for it. */
function preTokenization(gguf: GgufFile): { normalizer: unknown; preTokenizer: unknown } {
  const pre = String(ggufMetadata(gguf, 'tokenizer.ggml.pre', 'default'));
  if (pre === 'smollm' || pre === 'gpt2' || pre === 'default')
    return { normalizer: null, preTokenizer: byteLevel(true) };
  if (pre === 'qwen2')
    return {
      normalizer: { type: 'NFC' },
      preTokenizer: { type: 'Sequence', pretokenizers: [split(qwen2Split), byteLevel(false)] },
    };
  if (pre === 'llama-bpe')
    return {
      normalizer: null,
      preTokenizer: { type: 'Sequence', pretokenizers: [split(llama3Split), byteLevel(false)] },
    };
  throw new CheckpointError(
    `${gguf.file}: tokenizer.ggml.pre "${pre}" is not supported; supported: ${ggufPreTokenizers.join(', ')}`,
    { file: gguf.file, pre },
  );
}

/** The byte-level BPE tokenizer.json of the GGUF's vocabulary, merges and special (type 3) tokens. */
function tokenizerJsonOf(gguf: GgufFile, tokens: string[]): Record<string, unknown> {
  const merges = stringList(gguf, 'tokenizer.ggml.merges');
  const types = (gguf.metadata.get('tokenizer.ggml.token_type') ?? []) as GgufValue[];
  const vocab: Record<string, number> = {};
  for (const [id, token] of tokens.entries()) vocab[token] = id;
  const addedTokens = tokens
    .map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    }))
    .filter((token) => Number(types[token.id]) === 3);
  const { normalizer, preTokenizer } = preTokenization(gguf);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer,
    pre_tokenizer: preTokenizer,
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: merges.map((merge) => merge.split(' ', 2)),
    },
  };
}

/** tokenizer_config.json (special tokens, the chat template) and generation_config.json from the GGUF's metadata. */
function tokenizerConfigsOf(gguf: GgufFile, tokens: string[]): Omit<GgufTokenizerFiles, 'tokenizerJson'> {
  const tokenOf = (key: string): string | null => {
    const id = gguf.metadata.get(`tokenizer.ggml.${key}_token_id`);
    return id === undefined ? null : (tokens[Number(id)] ?? null);
  };
  const idOf = (key: string): number | null => {
    const id = gguf.metadata.get(`tokenizer.ggml.${key}_token_id`);
    return id === undefined ? null : Number(id);
  };
  const tokenizerConfig: Record<string, unknown> = {
    tokenizer_class: 'PreTrainedTokenizerFast',
    bos_token: tokenOf('bos'),
    eos_token: tokenOf('eos'),
    pad_token: tokenOf('padding'),
    unk_token: tokenOf('unknown'),
    clean_up_tokenization_spaces: false,
    add_prefix_space: false,
  };
  const template = gguf.metadata.get('tokenizer.chat_template');
  if (typeof template === 'string') tokenizerConfig.chat_template = template;
  const generationConfig = { bos_token_id: idOf('bos'), eos_token_id: idOf('eos'), pad_token_id: idOf('padding') };
  return { tokenizerConfig, generationConfig };
}

/** Writes tokenizer.json, tokenizer_config.json and generation_config.json into `folder` (for `loadChatFormat`). */
export async function writeGgufTokenizerFiles(gguf: GgufFile, folder: string): Promise<void> {
  const files = ggufTokenizerFiles(gguf);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'tokenizer.json'), JSON.stringify(files.tokenizerJson));
  await writeFile(join(folder, 'tokenizer_config.json'), JSON.stringify(files.tokenizerConfig, null, 2) + '\n');
  await writeFile(join(folder, 'generation_config.json'), JSON.stringify(files.generationConfig, null, 2) + '\n');
}

function stringList(gguf: GgufFile, key: string): string[] {
  const value = ggufMetadata(gguf, key);
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new CheckpointError(`${gguf.file}: metadata "${key}" is not a list of strings`, { file: gguf.file, key });
  }
  return value as string[];
}
