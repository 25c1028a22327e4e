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
import {
  bytesToUnicode,
  decodeByTokenBytes,
  specialTokenText,
  type DecodeOptions,
  type SpecialTokens,
  type Tokenizer,
} from './tokenizer.ts';

const gpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

export interface LoadHfTokenizerOptions {
  /** Used in error messages. */
  file?: string;
  /** Content of the token to use for each chat special token; default the `<|…|>` names of the byte tokenizer. */
  specialTokenContent?: Partial<Record<keyof SpecialTokens, string>>;
}

type Fail = (message: string) => never;

/** Builds a Tokenizer from a parsed `tokenizer.json`. */
export function loadHfTokenizer(
  tokenizerJson: unknown,
  { file = 'tokenizer.json', specialTokenContent = {} }: LoadHfTokenizerOptions = {},
): Tokenizer {
  const fail: Fail = (message) => {
    throw new CheckpointError(`${file}: ${message}`, { file });
  };
  const root = asObject(tokenizerJson) ?? fail('not a JSON object');
  const model = readBpeModel(root.model, fail);
  const added = readAddedTokens(root.added_tokens, fail);
  const specialTokens = chatSpecialTokens(model.idOf, added.idOf, specialTokenContent, fail);
  const normalize = normalizerOf(root.normalizer, fail);
  const preTokenize = preTokenizerOf(root.pre_tokenizer, fail);
  const bpe = bpeEncoder(model, file);
  const byteChar = bytesToUnicode();
  const charByte = new Map(byteChar.map((char, byte) => [char, byte]));
  const specialIds = new Set(Object.values(specialTokens));
  let vocabSize = 0;
  for (const id of [...model.idOf.values(), ...added.contentOf.keys()]) vocabSize = Math.max(vocabSize, id + 1);

  const tokenizer: Tokenizer = {
    vocabSize,
    specialTokens,
    encode(text: string): number[] {
      const ids: number[] = [];
      for (const piece of preTokenize(normalize(text))) {
        if (piece === '') continue;
        let chars = '';
        for (const byte of new TextEncoder().encode(piece)) chars += byteChar[byte];
        for (const id of bpe(chars)) ids.push(id); // not a spread: a long word's ids would overflow the stack
      }
      return ids;
    },
    decode(ids: readonly number[], options: DecodeOptions = {}): string {
      return decodeByTokenBytes(tokenizer, ids, options);
    },
    tokenBytes(id: number): Uint8Array | undefined {
      if (specialIds.has(id)) return undefined;
      const content = added.contentOf.get(id);
      if (content !== undefined) return new TextEncoder().encode(content);
      const token = model.tokenOf.get(id);
      if (token === undefined)
        throw new InvalidArgumentError(`token id ${id} is not in the vocabulary of ${file}`, { id, file });
      return Uint8Array.from([...token], (char) => charByte.get(char) ?? 0x3f);
    },
    toTokenizerJson(): Record<string, unknown> {
      return structuredClone(root);
    },
  };
  return tokenizer;
}

interface BpeModel {
  idOf: Map<string, number>;
  tokenOf: Map<number, string>;
  /** `"left right"` → its merge rank (lower merges first). */
  mergeRank: Map<string, number>;
  /** A word that is a whole vocabulary entry is that token, unmerged. */
  ignoreMerges: boolean;
}

function readBpeModel(spec: unknown, fail: Fail): BpeModel {
  const model = asObject(spec) ?? fail('no "model" object');
  if (model.type !== 'BPE') fail(`model type ${JSON.stringify(model.type)} is not supported (only BPE)`);
  const vocab = asObject(model.vocab) ?? fail('model.vocab is not an object');
  const idOf = new Map<string, number>();
  const tokenOf = new Map<number, string>();
  for (const [token, id] of Object.entries(vocab)) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0)
      return fail(`vocab id of ${JSON.stringify(token)} is not a non-negative integer`);
    idOf.set(token, id);
    tokenOf.set(id, token);
  }
  const merges: unknown[] = Array.isArray(model.merges) ? model.merges : fail('model.merges is not a list');
  const mergeRank = new Map<string, number>();
  for (const [rank, merge] of merges.entries()) {
    const pair: unknown = typeof merge === 'string' ? merge.split(' ') : merge;
    if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((part) => typeof part === 'string')) {
      return fail(`merge ${rank} is not a pair: ${JSON.stringify(merge)}`);
    }
    mergeRank.set(pair.join(' '), rank);
  }
  return { idOf, tokenOf, mergeRank, ignoreMerges: model.ignore_merges === true };
}

function readAddedTokens(spec: unknown, fail: Fail): { contentOf: Map<number, string>; idOf: Map<string, number> } {
  const contentOf = new Map<number, string>();
  const idOf = new Map<string, number>();
  for (const entry of Array.isArray(spec) ? spec : []) {
    const token = asObject(entry);
    const id = token?.id;
    const content = token?.content;
    if (typeof id !== 'number' || !Number.isInteger(id) || typeof content !== 'string')
      return fail(`bad added token ${JSON.stringify(entry)}`);
    contentOf.set(id, content);
    idOf.set(content, id);
  }
  return { contentOf, idOf };
}

/** The chat template's special tokens, looked up by content: added tokens first, then the vocabulary. */
function chatSpecialTokens(
  vocabIdOf: ReadonlyMap<string, number>,
  addedIdOf: ReadonlyMap<string, number>,
  specialTokenContent: Partial<Record<keyof SpecialTokens, string>>,
  fail: Fail,
): SpecialTokens {
  const missing: string[] = [];
  const specialTokens = {} as SpecialTokens;
  for (const name of Object.keys(specialTokenText) as (keyof SpecialTokens)[]) {
    const content = specialTokenContent[name] ?? specialTokenText[name];
    const id = addedIdOf.get(content) ?? vocabIdOf.get(content);
    if (id === undefined) missing.push(`${name} (${content})`);
    else specialTokens[name] = id;
  }
  if (missing.length > 0)
    fail(`chat special tokens not found: ${missing.join(', ')}; map them with specialTokenContent`);
  return specialTokens;
}

/** A word (byte characters) → its token ids by BPE merges, with a bounded cache. */
function bpeEncoder({ idOf, mergeRank, ignoreMerges }: BpeModel, file: string): (word: string) => number[] {
  const cache = new Map<string, number[]>();
  return (word) => {
    const cached = cache.get(word);
    if (cached !== undefined) return cached;
    let symbols = ignoreMerges && idOf.has(word) ? [word] : [...word];
    for (
      let merged = mergeBestPair(symbols, mergeRank);
      merged !== undefined;
      merged = mergeBestPair(symbols, mergeRank)
    )
      symbols = merged;
    const ids = symbols.map((symbol) => {
      const id = idOf.get(symbol);
      if (id === undefined)
        throw new InvalidArgumentError(`${file}: no vocabulary entry for ${JSON.stringify(symbol)}`, { file, symbol });
      return id;
    });
    if (cache.size < 100_000) cache.set(word, ids);
    return ids;
  };
}

/** One BPE step: the lowest-ranked adjacent pair, merged at each place it occurs (left to right); undefined when no pair merges. */
function mergeBestPair(symbols: readonly string[], mergeRank: ReadonlyMap<string, number>): string[] | undefined {
  let best: { left: string; right: string } | undefined;
  let bestRank = Infinity;
  let previous: string | undefined;
  for (const symbol of symbols) {
    const rank = previous === undefined ? undefined : mergeRank.get(`${previous} ${symbol}`);
    if (previous !== undefined && rank !== undefined && rank < bestRank) {
      bestRank = rank;
      best = { left: previous, right: symbol };
    }
    previous = symbol;
  }
  if (best === undefined) return undefined;
  const { left, right } = best;
  const merged: string[] = [];
  let pending: string | undefined;
  for (const symbol of symbols) {
    if (pending === left && symbol === right) {
      merged.push(left + right);
      pending = undefined;
    } else {
      if (pending !== undefined) merged.push(pending);
      pending = symbol;
    }
  }
  if (pending !== undefined) merged.push(pending);
  return merged;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function normalizerOf(spec: unknown, fail: Fail): (text: string) => string {
  if (spec === null || spec === undefined) return (text) => text;
  if (asObject(spec)?.type === 'NFC') return (text) => text.normalize('NFC');
  return fail(`normalizer ${JSON.stringify(spec)} is not supported (null or NFC)`);
}

/** Returns a function splitting text into pre-tokens (before the byte → char mapping). */
function preTokenizerOf(spec: unknown, fail: Fail): (text: string) => string[] {
  const sequence = asObject(spec);
  const steps =
    sequence?.type === 'Sequence'
      ? (sequence.pretokenizers as unknown[])
      : spec === null || spec === undefined
        ? []
        : [spec];
  const splitters: ((text: string) => string[])[] = [];
  for (const step of steps) {
    const object = asObject(step);
    const regex = asObject(object?.pattern)?.Regex;
    if (object?.type === 'ByteLevel') {
      if (object.add_prefix_space === true) splitters.push((text) => [text.startsWith(' ') ? text : ` ${text}`]);
      if (object.use_regex !== false) splitters.push(regexSplitter(gpt2Pattern, fail));
    } else if (object?.type === 'Split' && typeof regex === 'string' && object.behavior === 'Isolated') {
      splitters.push(regexSplitter(regex, fail));
    } else {
      fail(
        `pre_tokenizer ${JSON.stringify(step)} is not supported (ByteLevel, or Split with a Regex and Isolated behavior)`,
      );
    }
  }
  return (text) => splitters.reduce((pieces, split) => pieces.flatMap(split), [text]);
}

/** Isolated split: matches become pieces, and so does the text between them. */
function regexSplitter(pattern: string, fail: Fail): (text: string) => string[] {
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
