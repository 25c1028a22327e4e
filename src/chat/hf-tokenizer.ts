/**
 * A Hugging Face byte-level BPE `tokenizer.json` (GPT-2, Llama 3, Qwen2 style) as a `Tokenizer`.
 *
 * Supported: model BPE (merges as "a b" strings or [a, b] pairs, `ignore_merges`), normalizer
 * null or NFC, pre-tokenizer ByteLevel (with or without GPT-2's regex split) or a Sequence of
 * Split(Regex, Isolated) and ByteLevel, added tokens. Anything else is a CheckpointError.
 *
 * As with the byte tokenizer, added/special tokens are never parsed from plain text. The chat
 * template's special tokens are looked up by content (`<|user|>` …); `specialTokenContent` maps
 * them onto another tokenizer's tokens (for example `end: '<|im_end|>'`).
 */
import { CheckpointError, InvalidArgumentError } from '../core/errors.ts';
import { StreamingDecoder, bytesToUnicode, specialTokenText, type DecodeOptions, type SpecialTokens, type Tokenizer } from './tokenizer.ts';

const gpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

export interface LoadHfTokenizerOptions {
  /** Used in error messages. */
  file?: string;
  /** Content of the token to use for each chat special token; default the `<|…|>` names of the byte tokenizer. */
  specialTokenContent?: Partial<Record<keyof SpecialTokens, string>>;
}

/** Builds a Tokenizer from a parsed `tokenizer.json`. */
export function loadHfTokenizer(tokenizerJson: unknown, { file = 'tokenizer.json', specialTokenContent = {} }: LoadHfTokenizerOptions = {}): Tokenizer {
  const fail = (message: string): never => {
    throw new CheckpointError(`${file}: ${message}`, { file });
  };
  const root = asObject(tokenizerJson) ?? fail('not a JSON object');
  const model = asObject(root.model) ?? fail('no "model" object');
  if (model.type !== 'BPE') fail(`model type ${JSON.stringify(model.type)} is not supported (only BPE)`);
  const vocab = asObject(model.vocab) ?? fail('model.vocab is not an object');

  const idOf = new Map<string, number>();
  const tokenOf = new Map<number, string>();
  for (const [token, id] of Object.entries(vocab)) {
    if (!Number.isInteger(id) || (id as number) < 0) fail(`vocab id of ${JSON.stringify(token)} is not a non-negative integer`);
    idOf.set(token, id as number);
    tokenOf.set(id as number, token);
  }
  const rawMerges = Array.isArray(model.merges) ? model.merges : fail('model.merges is not a list');
  const mergeRank = new Map<string, number>();
  rawMerges.forEach((merge: unknown, rank: number) => {
    const pair: unknown = typeof merge === 'string' ? merge.split(' ') : merge;
    if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((part) => typeof part === 'string')) {
      return fail(`merge ${rank} is not a pair: ${JSON.stringify(merge)}`);
    }
    mergeRank.set(`${pair[0]} ${pair[1]}`, rank);
  });

  const addedContent = new Map<number, string>();
  const addedIdOf = new Map<string, number>();
  for (const entry of Array.isArray(root.added_tokens) ? root.added_tokens : []) {
    const token = asObject(entry);
    if (token === undefined || !Number.isInteger(token.id) || typeof token.content !== 'string') fail(`bad added token ${JSON.stringify(entry)}`);
    addedContent.set(token!.id as number, token!.content as string);
    addedIdOf.set(token!.content as string, token!.id as number);
  }
  const missing: string[] = [];
  const specialTokens = {} as SpecialTokens;
  for (const name of Object.keys(specialTokenText) as (keyof SpecialTokens)[]) {
    const content = specialTokenContent[name] ?? specialTokenText[name];
    const id = addedIdOf.get(content) ?? idOf.get(content);
    if (id === undefined) missing.push(`${name} (${content})`);
    else specialTokens[name] = id;
  }
  if (missing.length > 0) fail(`chat special tokens not found: ${missing.join(', ')}; map them with specialTokenContent`);

  const normalize = normalizerOf(root.normalizer, fail);
  const preTokenize = preTokenizerOf(root.pre_tokenizer, fail);
  const ignoreMerges = model.ignore_merges === true;
  const byteChar = bytesToUnicode();
  const charByte = new Map(byteChar.map((char, byte) => [char, byte]));
  const specialIds = new Set(Object.values(specialTokens));
  const vocabSize = Math.max(-1, ...idOf.values(), ...addedContent.keys()) + 1;
  const cache = new Map<string, number[]>();

  const bpe = (word: string): number[] => {
    const cached = cache.get(word);
    if (cached !== undefined) return cached;
    let symbols = [...word];
    if (!(ignoreMerges && idOf.has(word))) {
      while (symbols.length > 1) {
        let best = -1;
        let bestRank = Infinity;
        for (let i = 0; i < symbols.length - 1; i++) {
          const rank = mergeRank.get(`${symbols[i]} ${symbols[i + 1]}`);
          if (rank !== undefined && rank < bestRank) {
            bestRank = rank;
            best = i;
          }
        }
        if (best < 0) break;
        const left = symbols[best]!;
        const right = symbols[best + 1]!;
        const next: string[] = [];
        for (let i = 0; i < symbols.length; i++) {
          if (i < symbols.length - 1 && symbols[i] === left && symbols[i + 1] === right) {
            next.push(left + right);
            i++;
          } else next.push(symbols[i]!);
        }
        symbols = next;
      }
    } else symbols = [word];
    const ids = symbols.map((symbol) => {
      const id = idOf.get(symbol);
      if (id === undefined) throw new InvalidArgumentError(`${file}: no vocabulary entry for ${JSON.stringify(symbol)}`, { file, symbol });
      return id;
    });
    if (cache.size < 100_000) cache.set(word, ids);
    return ids;
  };

  const tokenizer: Tokenizer = {
    vocabSize,
    specialTokens,
    encode(text: string): number[] {
      const ids: number[] = [];
      for (const piece of preTokenize(normalize(text))) {
        if (piece === '') continue;
        let chars = '';
        for (const byte of new TextEncoder().encode(piece)) chars += byteChar[byte];
        ids.push(...bpe(chars));
      }
      return ids;
    },
    decode(ids: readonly number[], options: DecodeOptions = {}): string {
      const decoder = new StreamingDecoder(tokenizer, options);
      let text = '';
      for (const id of ids) text += decoder.push(id);
      return text + decoder.flush();
    },
    tokenBytes(id: number): Uint8Array | undefined {
      if (specialIds.has(id)) return undefined;
      const added = addedContent.get(id);
      if (added !== undefined) return new TextEncoder().encode(added);
      const token = tokenOf.get(id);
      if (token === undefined) throw new InvalidArgumentError(`token id ${id} is not in the vocabulary of ${file}`, { id, file });
      return Uint8Array.from([...token], (char) => charByte.get(char) ?? 0x3f);
    },
    toTokenizerJson(): Record<string, unknown> {
      return structuredClone(root);
    },
  };
  return tokenizer;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function normalizerOf(spec: unknown, fail: (message: string) => never): (text: string) => string {
  if (spec === null || spec === undefined) return (text) => text;
  if (asObject(spec)?.type === 'NFC') return (text) => text.normalize('NFC');
  return fail(`normalizer ${JSON.stringify(spec)} is not supported (null or NFC)`);
}

/** Returns a function splitting text into pre-tokens (before the byte → char mapping). */
function preTokenizerOf(spec: unknown, fail: (message: string) => never): (text: string) => string[] {
  const steps = asObject(spec)?.type === 'Sequence' ? (asObject(spec)!.pretokenizers as unknown[]) : spec === null || spec === undefined ? [] : [spec];
  const splitters: ((text: string) => string[])[] = [];
  for (const step of steps) {
    const object = asObject(step);
    if (object?.type === 'ByteLevel') {
      if (object.add_prefix_space === true) splitters.push((text) => [text.startsWith(' ') ? text : ' ' + text]);
      if (object.use_regex !== false) splitters.push(regexSplitter(gpt2Pattern, fail));
    } else if (object?.type === 'Split' && typeof asObject(object.pattern)?.Regex === 'string' && object.behavior === 'Isolated') {
      splitters.push(regexSplitter(asObject(object.pattern)!.Regex as string, fail));
    } else {
      fail(`pre_tokenizer ${JSON.stringify(step)} is not supported (ByteLevel, or Split with a Regex and Isolated behavior)`);
    }
  }
  return (text) => splitters.reduce((pieces, split) => pieces.flatMap(split), [text]);
}

/** Isolated split: matches become pieces, and so does the text between them. */
function regexSplitter(pattern: string, fail: (message: string) => never): (text: string) => string[] {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, 'gu');
  } catch (error) {
    return fail(`pre-tokenizer regex cannot be compiled in JavaScript (${(error as Error).message})`);
  }
  return (text) => {
    const pieces: string[] = [];
    let last = 0;
    for (const match of text.matchAll(regex)) {
      if (match[0] === '') continue;
      if (match.index > last) pieces.push(text.slice(last, match.index));
      pieces.push(match[0]);
      last = match.index + match[0].length;
    }
    if (last < text.length) pieces.push(text.slice(last));
    return pieces;
  };
}
