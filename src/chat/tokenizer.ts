/**
 * Tokenizers. The built-in model uses a byte-level tokenizer: ids 0–255 are the UTF-8 bytes of
 * the text, followed by a handful of special tokens for the chat template.
 *
 *   id    token           use
 *   0–255 byte 0x00–0xFF  text
 *   256   <|pad|>         padding (never attended to, never trained on)
 *   257   <|bos|>         start of a conversation
 *   258   <|end|>         end of a turn; the stop token for generation
 *   259   <|system|>      role header
 *   260   <|user|>        role header
 *   261   <|assistant|>   role header
 *   262   <|tool|>        role header (tool output)
 *   263–  spare           (the default model vocabSize 272 leaves 263–271 unused)
 *
 * Special tokens are never parsed out of plain text: `encode('<|end|>')` gives the 7 bytes of
 * that string, so user or tool text cannot inject a turn boundary.
 *
 * `decode(encode(s)) === s` for every well-formed UTF-16 string. A lone surrogate (not valid
 * Unicode, so it has no UTF-8 encoding) is encoded as U+FFFD, like `TextEncoder` does.
 */
import { InvalidArgumentError } from '../core/errors.ts';

/** Ids of the special tokens the chat template needs. */
export interface SpecialTokens {
  pad: number;
  bos: number;
  end: number;
  system: number;
  user: number;
  assistant: number;
  tool: number;
}

/** The text form of each special token (used by `decode` and in tokenizer files). */
export const specialTokenText: Readonly<Record<keyof SpecialTokens, string>> = {
  pad: '<|pad|>',
  bos: '<|bos|>',
  end: '<|end|>',
  system: '<|system|>',
  user: '<|user|>',
  assistant: '<|assistant|>',
  tool: '<|tool|>',
};

export interface DecodeOptions {
  /** Leave special tokens out of the text instead of writing their `<|…|>` form. Default false. */
  skipSpecialTokens?: boolean;
}

/** What the chat template, the rollout and checkpoints need from a tokenizer (byte-level or HF BPE). */
export interface Tokenizer {
  /** Number of ids in use (the model's vocabSize must be at least this). */
  readonly vocabSize: number;
  readonly specialTokens: SpecialTokens;
  /** Plain text → ids. Special tokens are not parsed from the text. */
  encode(text: string): number[];
  /** Ids → text. Invalid UTF-8 becomes U+FFFD. */
  decode(ids: readonly number[], options?: DecodeOptions): string;
  /** The raw bytes a token stands for; undefined for special tokens. Used for streaming decode. */
  tokenBytes(id: number): Uint8Array | undefined;
  /** The Hugging Face `tokenizer.json` describing this tokenizer (written into checkpoints). */
  toTokenizerJson(): Record<string, unknown>;
}

export const byteSpecialTokens: Readonly<SpecialTokens> = {
  pad: 256,
  bos: 257,
  end: 258,
  system: 259,
  user: 260,
  assistant: 261,
  tool: 262,
};

const BYTE_VOCAB_SIZE = 263;

/** The byte-level tokenizer of the built-in model (stateless; one shared instance). */
export const byteTokenizer: Tokenizer = {
  vocabSize: BYTE_VOCAB_SIZE,
  specialTokens: byteSpecialTokens,

  encode(text: string): number[] {
    return Array.from(new TextEncoder().encode(text));
  },

  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    return decodeByTokenBytes(byteTokenizer, ids, options);
  },

  tokenBytes(id: number): Uint8Array | undefined {
    checkId(id, BYTE_VOCAB_SIZE);
    return id < 256 ? BYTES[id] : undefined;
  },

  toTokenizerJson(): Record<string, unknown> {
    return byteTokenizerJson();
  },
};

const BYTES: Uint8Array[] = Array.from({ length: 256 }, (_, b) => Uint8Array.of(b));

function checkId(id: number, vocabSize: number): void {
  if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
    throw new InvalidArgumentError(`token id ${id} is outside the vocabulary [0, ${vocabSize})`, { id, vocabSize });
  }
}

/** Special-token id → its text, for any tokenizer. */
export function specialTokenById(tokenizer: Tokenizer): Map<number, string> {
  const byId = new Map<number, string>();
  for (const [name, id] of Object.entries(tokenizer.specialTokens) as [keyof SpecialTokens, number][]) {
    byId.set(id, specialTokenText[name]);
  }
  return byId;
}

/**
 * Incremental decoding for generation: push ids one at a time and get back the text that is
 * complete so far. Bytes of a partial UTF-8 sequence are held back until the sequence completes
 * (or until a written special token or `flush()` ends it, when they become U+FFFD).
 */
export class StreamingDecoder {
  private readonly tokenizer: Tokenizer;
  private readonly skipSpecialTokens: boolean;
  private readonly specialText: Map<number, string>;
  private decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

  constructor(tokenizer: Tokenizer, options: DecodeOptions = {}) {
    this.tokenizer = tokenizer;
    this.skipSpecialTokens = options.skipSpecialTokens ?? false;
    this.specialText = specialTokenById(tokenizer);
  }

  /** Adds one id; returns the newly completed text (possibly ''). */
  push(id: number): string {
    const bytes = this.tokenizer.tokenBytes(id);
    if (bytes !== undefined) return this.decoder.decode(bytes, { stream: true });
    // A skipped special token is left out as if absent (transformers' skip_special_tokens): the
    // bytes on either side of it may still complete one UTF-8 sequence.
    if (this.skipSpecialTokens) return '';
    return this.flush() + (this.specialText.get(id) ?? `<|special_${id}|>`);
  }

  /** Ends the stream: any held-back partial sequence is returned as U+FFFD. */
  flush(): string {
    const rest = this.decoder.decode();
    this.decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
    return rest;
  }
}

/** Whole-sequence `decode` for a tokenizer that knows each token's bytes: the streaming decoder, pushed every id then flushed. */
export function decodeByTokenBytes(tokenizer: Tokenizer, ids: readonly number[], options: DecodeOptions = {}): string {
  const decoder = new StreamingDecoder(tokenizer, options);
  let text = '';
  for (const id of ids) text += decoder.push(id);
  return text + decoder.flush();
}

/**
 * GPT-2's reversible byte → printable-character table, used by Hugging Face byte-level
 * tokenizers (tokenizer.json stores tokens as strings of these characters).
 */
export function bytesToUnicode(): string[] {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const table: string[] = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    table[b] = printable.includes(b) ? String.fromCharCode(b) : String.fromCharCode(256 + extra++);
  }
  return table;
}

/**
 * The byte tokenizer as a Hugging Face `tokenizer.json`: a BPE model with the 256 byte tokens
 * and no merges, byte-level pre-tokenizer (no regex split) and decoder, and the special tokens
 * as added tokens — `tokenizers`/`transformers` load it and produce the same ids.
 */
function byteTokenizerJson(): Record<string, unknown> {
  const table = bytesToUnicode();
  const vocab: Record<string, number> = {};
  table.forEach((char, byte) => {
    vocab[char] = byte;
  });
  const addedTokens = (Object.keys(byteSpecialTokens) as (keyof SpecialTokens)[])
    .map((name) => ({
      id: byteSpecialTokens[name],
      content: specialTokenText[name],
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    }))
    .sort((a, b) => a.id - b.id);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
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
      ignore_merges: false,
      vocab,
      merges: [],
    },
  };
}
