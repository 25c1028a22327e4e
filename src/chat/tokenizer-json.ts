/**
 * Any Hugging Face `tokenizer.json` as an agentrl `Tokenizer`, through `@huggingface/tokenizers`
 * (Hugging Face's own JS port: BPE / WordPiece / Unigram, every normalizer, pre-tokenizer and
 * decoder, and the Oniguruma → JS regex translation that makes Qwen2's and Llama-3's `(?i:…)`
 * split patterns compile on Node 20). `npm run check:chat` proves encode/decode equal to the
 * Python `tokenizers` library on ≥ 2,000 strings for SmolLM2's, a Qwen2-style and a Llama-3-style
 * tokenizer.json.
 *
 * Semantics, as Hugging Face's `tokenizer.encode(text, add_special_tokens=False)`:
 *   - added tokens (special or not) ARE parsed out of the text, honouring lstrip/rstrip/single_word;
 *     this is what `apply_chat_template` relies on, and it means a user's text holding
 *     `<|im_end|>` becomes that token — unlike agentrl's byte tokenizer, which never parses them;
 *   - no post-processor (no BOS added): the chat template writes what the model needs;
 *   - `decode` does no `clean_up_tokenization_spaces` (as `tokenizers`' own decode).
 *
 * `specialTokens` (the byte template's roles) map onto the model's tokens: `end` is the chat
 * format's end-of-turn token (`<|im_end|>`, `<|eot_id|>` or eos), `bos` the bos token (else `end`),
 * `pad` the pad token (else eos). The model has no role tokens: `system`/`user`/`assistant`/`tool`
 * are set to `end` and only agentrl's byte template reads them — render with the model's
 * ChatFormat (chat-format.ts), never with chat-template.ts, when this tokenizer is in use.
 */
import { Tokenizer as HuggingFaceTokenizer } from '@huggingface/tokenizers';
import { CheckpointError, InvalidArgumentError } from '../core/errors.ts';
import { bytesToUnicode, type DecodeOptions, type SpecialTokens, type Tokenizer } from './tokenizer.ts';

export interface TokenizerJsonOptions {
  /** The parsed tokenizer_config.json (bos/eos/pad token names); default {}. */
  tokenizerConfig?: Record<string, unknown>;
  /** Content of the end-of-turn token; default `<|im_end|>`, `<|eot_id|>` or the eos token, the first present. */
  endOfTurn?: string;
  /** Used in error messages. */
  file?: string;
}

/** A `Tokenizer` that also knows the model's token strings. */
export interface ModelTokenizer extends Tokenizer {
  /** Id of a token by its content (added tokens first, then the vocabulary); undefined when absent. */
  tokenId(content: string): number | undefined;
  /** Ids of special added tokens (skipped by `decode(…, { skipSpecialTokens: true })`). */
  readonly specialIds: ReadonlySet<number>;
}

interface AddedTokenEntry {
  id: number;
  content: string;
  special: boolean;
}

export function loadTokenizerJson(tokenizerJson: unknown, options: TokenizerJsonOptions = {}): ModelTokenizer {
  const { tokenizerConfig = {}, file = 'tokenizer.json' } = options;
  if (typeof tokenizerJson !== 'object' || tokenizerJson === null)
    throw new CheckpointError(`${file}: not a JSON object`, { file });
  const json = tokenizerJson as Record<string, unknown>;
  let library: HuggingFaceTokenizer;
  try {
    // The library's config only supplies clean-up and lower-casing flags: pass neither.
    library = new HuggingFaceTokenizer(json, { clean_up_tokenization_spaces: false });
  } catch (error) {
    throw new CheckpointError(`${file}: @huggingface/tokenizers cannot load it: ${(error as Error).message}`, { file });
  }
  const added = addedTokenEntries(json.added_tokens);
  const addedByContent = new Map(added.map((token) => [token.content, token.id]));
  const vocab = library.get_vocab(true);
  const tokenId = (content: string): number | undefined => addedByContent.get(content) ?? vocab.get(content);
  let vocabSize = 0;
  for (const id of vocab.values()) vocabSize = Math.max(vocabSize, id + 1);
  const tokenBytes = tokenBytesReader(library, added, usesByteLevelDecoder(json.decoder));

  return {
    vocabSize,
    specialTokens: modelSpecialTokens(tokenId, tokenizerConfig, options.endOfTurn, file),
    specialIds: new Set(added.filter((token) => token.special).map((token) => token.id)),
    tokenId,
    encode(text: string): number[] {
      return library.encode(text, { add_special_tokens: false }).ids;
    },
    decode(ids: readonly number[], { skipSpecialTokens = false }: DecodeOptions = {}): string {
      for (const id of ids) checkId(id, vocabSize);
      if (ids.length === 0) return ''; // the library rejects an empty list
      return library.decode([...ids], { skip_special_tokens: skipSpecialTokens, clean_up_tokenization_spaces: false });
    },
    tokenBytes(id: number): Uint8Array | undefined {
      checkId(id, vocabSize);
      return tokenBytes(id);
    },
    toTokenizerJson(): Record<string, unknown> {
      return json;
    },
  };
}

function addedTokenEntries(spec: unknown): AddedTokenEntry[] {
  return (Array.isArray(spec) ? spec : []).map((entry: Record<string, unknown>) => ({
    id: entry.id as number,
    content: entry.content as string,
    special: entry.special === true,
  }));
}

/**
 * The byte template's roles on the model's tokens (see the header): `end` the end-of-turn token
 * (`endOfTurn`, else `<|im_end|>`, `<|eot_id|>` or eos, the first present), `bos` and `pad` their
 * tokenizer_config.json tokens (pad: else eos), each else `end`; the roles are `end`.
 */
function modelSpecialTokens(
  tokenId: (content: string) => number | undefined,
  tokenizerConfig: Record<string, unknown>,
  endOfTurn: string | undefined,
  file: string,
): SpecialTokens {
  const name = (key: string): string | undefined => tokenName(tokenizerConfig[key]);
  const eos = name('eos_token');
  const endContent =
    endOfTurn ??
    ['<|im_end|>', '<|eot_id|>', eos].find((content) => content !== undefined && tokenId(content) !== undefined);
  const end = endContent === undefined ? undefined : tokenId(endContent);
  if (end === undefined) {
    throw new CheckpointError(
      `${file}: no end-of-turn token (looked for ${endOfTurn ?? `<|im_end|>, <|eot_id|>, eos_token ${eos ?? '(none in tokenizer_config.json)'}`})`,
      { file },
    );
  }
  const idOrEnd = (content: string | undefined): number =>
    (content === undefined ? undefined : tokenId(content)) ?? end;
  return {
    pad: idOrEnd(name('pad_token') ?? eos),
    bos: idOrEnd(name('bos_token')),
    end,
    system: end,
    user: end,
    assistant: end,
    tool: end,
  };
}

/** A token's bytes (undefined for a special added token), cached; the id is checked by the caller. */
function tokenBytesReader(
  library: HuggingFaceTokenizer,
  added: readonly AddedTokenEntry[],
  byteLevel: boolean,
): (id: number) => Uint8Array | undefined {
  const addedById = new Map(added.map((token) => [token.id, token]));
  const byteOfChar = new Map(bytesToUnicode().map((char, byte) => [char, byte]));
  const encoder = new TextEncoder();
  const cache = new Map<number, Uint8Array | undefined>();
  return (id) => {
    if (cache.has(id)) return cache.get(id);
    const addedToken = addedById.get(id);
    let bytes: Uint8Array | undefined;
    if (addedToken !== undefined) bytes = addedToken.special ? undefined : encoder.encode(addedToken.content);
    else {
      const piece = library.id_to_token(id) ?? '';
      const raw = byteLevel ? [...piece].map((char) => byteOfChar.get(char)) : undefined;
      // Byte-level vocabularies store bytes as printable characters; others decode the token alone.
      bytes = raw?.every((byte) => byte !== undefined)
        ? Uint8Array.from(raw as number[])
        : encoder.encode(library.decode([id]));
    }
    cache.set(id, bytes);
    return bytes;
  };
}

/** A tokenizer_config.json token entry: a string, or an AddedToken dict with `content`. */
export function tokenName(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { content?: unknown }).content === 'string')
    return (value as { content: string }).content;
  return undefined;
}

function usesByteLevelDecoder(decoder: unknown): boolean {
  if (typeof decoder !== 'object' || decoder === null) return false;
  const node = decoder as { type?: unknown; decoders?: unknown[] };
  if (node.type === 'ByteLevel') return true;
  return node.type === 'Sequence' && Array.isArray(node.decoders) && node.decoders.some(usesByteLevelDecoder);
}

function checkId(id: number, vocabSize: number): void {
  if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
    throw new InvalidArgumentError(`token id ${id} is outside the vocabulary [0, ${vocabSize})`, { id, vocabSize });
  }
}
