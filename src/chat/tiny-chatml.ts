/**
 * A test double that ships with the library: a ChatML chat format over a tiny byte-level
 * tokenizer.json (one token per byte, ids 3–258; `<|endoftext|>` 0, `<|im_start|>` 1,
 * `<|im_end|>` 2) with a Llama-3 style `(?i:…)` split and a SmolLM2-style template — a model's
 * own protocol, for tests that must not depend on a downloaded model.
 */
import { bytesToUnicode } from './tokenizer.ts';
import type { ChatFormat, ChatFormatFiles } from './chat-format.ts';
import { chatFormatFromFiles } from './model-folder.ts';

export const tinyChatmlTemplate =
  "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are helpful.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

export function tinyTokenizerJson(): Record<string, unknown> {
  const vocab: Record<string, number> = {};
  bytesToUnicode().forEach((char, byte) => {
    vocab[char] = byte + 3;
  });
  const special = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
  special.forEach((content, id) => {
    vocab[content] = id;
  });
  return {
    version: '1.0',
    added_tokens: special.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        {
          type: 'Split',
          pattern: {
            Regex:
              "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
          },
          behavior: 'Isolated',
          invert: false,
        },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: [],
    },
  };
}

/** The tiny model's tokenizer.json, tokenizer_config.json (with the template) and generation_config.json. */
export function tinyChatmlFiles(): ChatFormatFiles {
  return {
    tokenizerJson: tinyTokenizerJson(),
    tokenizerConfig: { bos_token: '<|im_start|>', eos_token: '<|im_end|>', chat_template: tinyChatmlTemplate },
    generationConfig: { eos_token_id: 2 },
  };
}

/** The tiny ChatML format (stop token `<|im_end|>` = 2, SmolLM2's tool-call family). */
export function tinyChatmlFormat(): ChatFormat {
  return chatFormatFromFiles(tinyChatmlFiles(), { name: 'tiny-chatml', toolCallFamily: 'smollm2' });
}
