import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../core/rng.ts';
import { CheckpointError } from '../core/errors.ts';
import { StreamingDecoder, byteTokenizer, bytesToUnicode, specialTokenText, type Tokenizer } from './tokenizer.ts';
import { loadHfTokenizer } from './hf-tokenizer.ts';

/** A tiny GPT-2 style tokenizer.json: 256 byte tokens, six merges, the chat special tokens. */
function tinyBpeJson({ arrayMerges = false } = {}): Record<string, unknown> {
  const table = bytesToUnicode();
  const vocab: Record<string, number> = {};
  table.forEach((char, byte) => {
    vocab[char] = byte;
  });
  const merged = ['th', 'the', 'Ġthe', 'Ġc', 'at', 'Ġcat'];
  merged.forEach((token, i) => {
    vocab[token] = 256 + i;
  });
  const merges = [
    ['t', 'h'],
    ['th', 'e'],
    ['Ġ', 'the'],
    ['Ġ', 'c'],
    ['a', 't'],
    ['Ġc', 'at'],
  ];
  const specials = [...Object.values(specialTokenText), '<|endoftext|>'];
  return {
    version: '1.0',
    added_tokens: specials.map((content, i) => ({
      id: 262 + i,
      content,
      special: true,
      normalized: false,
      lstrip: false,
      rstrip: false,
      single_word: false,
    })),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', vocab, merges: arrayMerges ? merges : merges.map((pair) => pair.join(' ')) },
  };
}

function randomText(rng: Rng, length: number): string {
  const pools: [number, number][] = [
    [0x20, 0x7e],
    [0x20, 0x7e],
    [0x9, 0xd],
    [0xa0, 0x36f],
    [0x4e00, 0x9fff],
    [0x1f300, 0x1faff],
  ];
  let text = '';
  for (let i = 0; i < length; i++) {
    const [low, high] = rng.pick(pools);
    text += String.fromCodePoint(rng.range(low, high));
  }
  return text;
}

/** What every Tokenizer implementation must do. */
function tokenizerContract(name: string, tokenizer: Tokenizer): void {
  test(`${name}: round trip, ids in range, specials not parsed, streaming equals whole`, () => {
    const rng = new Rng(3);
    for (let i = 0; i < 100; i++) {
      const text = randomText(rng, rng.range(0, 30)) + (i % 10 === 0 ? ' the cat <|end|>' : '');
      const ids = tokenizer.encode(text);
      assert.ok(ids.every((id) => Number.isInteger(id) && id >= 0 && id < tokenizer.vocabSize));
      assert.ok(ids.every((id) => !Object.values(tokenizer.specialTokens).includes(id)));
      assert.equal(tokenizer.decode(ids), text);
      const stream = new StreamingDecoder(tokenizer);
      assert.equal(ids.map((id) => stream.push(id)).join('') + stream.flush(), text);
    }
    assert.equal(new Set(Object.values(tokenizer.specialTokens)).size, 7);
    assert.equal(tokenizer.decode([tokenizer.specialTokens.user, tokenizer.specialTokens.end]), '<|user|><|end|>');
  });
}

tokenizerContract('byteTokenizer', byteTokenizer);
tokenizerContract('BPE tokenizer.json', loadHfTokenizer(tinyBpeJson()));
tokenizerContract('byte tokenizer loaded from its tokenizer.json', loadHfTokenizer(byteTokenizer.toTokenizerJson()));

test('BPE applies merges by rank', () => {
  const tokenizer = loadHfTokenizer(tinyBpeJson());
  assert.deepEqual(tokenizer.encode('the cat'), [257, 261]); // "the", "Ġcat"
  assert.deepEqual(tokenizer.encode('thethe'), [257, 257]);
  assert.deepEqual(tokenizer.encode(' cats'), [261, 0x73]);
  assert.deepEqual(tokenizer.encode('at the'), [260, 258]);
  assert.equal(tokenizer.vocabSize, 270);
  assert.deepEqual(loadHfTokenizer(tinyBpeJson({ arrayMerges: true })).encode('the cat'), [257, 261]);
  assert.equal(tokenizer.decode([269]), '<|endoftext|>'); // added non-chat token decodes to its content
});

test('BPE merges a repeated pair left to right, then the merged pairs', () => {
  const json = tinyBpeJson();
  const model = json.model as { vocab: Record<string, number>; merges: string[] };
  Object.assign(model.vocab, { aa: 270, aaaa: 271 });
  model.merges.push('a a', 'aa aa');
  const tokenizer = loadHfTokenizer(json);
  assert.deepEqual(tokenizer.encode('aaa'), [270, 0x61]);
  assert.deepEqual(tokenizer.encode('aaaaa'), [271, 0x61]);
  assert.deepEqual(tokenizer.encode('aaaaaa'), [271, 270]);
});

test('the byte tokenizer.json loads to the same ids as byteTokenizer', () => {
  const loaded = loadHfTokenizer(byteTokenizer.toTokenizerJson());
  const text = 'héllo 世界 😀 <|end|>';
  assert.deepEqual(loaded.encode(text), byteTokenizer.encode(text));
  assert.deepEqual(loaded.specialTokens, byteTokenizer.specialTokens);
  assert.equal(loaded.vocabSize, byteTokenizer.vocabSize);
});

test('special tokens can be mapped onto other token names; missing ones are listed', () => {
  const json = tinyBpeJson();
  const tokenizer = loadHfTokenizer(json, { specialTokenContent: { end: '<|endoftext|>' } });
  assert.equal(tokenizer.specialTokens.end, 269);
  json.added_tokens = [];
  assert.throws(
    () => loadHfTokenizer(json, { file: 't.json' }),
    (error: unknown) => {
      assert.ok(error instanceof CheckpointError);
      assert.match(error.message, /^t\.json: chat special tokens not found: pad \(<\|pad\|>\), bos/);
      return true;
    },
  );
});

test('unsupported tokenizer.json features are CheckpointErrors', () => {
  assert.throws(() => loadHfTokenizer({ model: { type: 'Unigram' } }), /only BPE/);
  assert.throws(() => loadHfTokenizer({ ...tinyBpeJson(), normalizer: { type: 'Lowercase' } }), CheckpointError);
  assert.throws(() => loadHfTokenizer({ ...tinyBpeJson(), pre_tokenizer: { type: 'Whitespace' } }), /pre_tokenizer/);
  assert.throws(() => loadHfTokenizer('nope'), /not a JSON object/);
});

test('a 1,000,000-letter word encodes whole (its ids are appended one by one, not spread as arguments)', () => {
  const tokenizer = loadHfTokenizer(tinyBpeJson());
  const ids = tokenizer.encode('x'.repeat(1_000_000));
  assert.equal(ids.length, 1_000_000);
  assert.equal(tokenizer.decode(ids.slice(0, 3)), 'xxx');
});
