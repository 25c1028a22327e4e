import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../core/rng.ts';
import { InvalidArgumentError } from '../core/errors.ts';
import { modelConfigSchema } from '../model/config.ts';
import { StreamingDecoder, byteSpecialTokens, byteTokenizer, bytesToUnicode } from './tokenizer.ts';

/** A random well-formed string drawn from ASCII, Latin, CJK, combining marks, emoji and ZWJ sequences. */
function randomText(rng: Rng, length: number): string {
  const pools: [number, number][] = [
    [0x20, 0x7e], // ASCII
    [0x00, 0x1f], // control characters, including NUL
    [0xa0, 0x24f], // Latin
    [0x300, 0x36f], // combining marks
    [0x4e00, 0x9fff], // CJK
    [0xac00, 0xd7a3], // Hangul
    [0x1f300, 0x1faff], // emoji (astral plane, surrogate pairs)
    [0x10000, 0x10ffff], // any astral code point
  ];
  let text = '';
  for (let i = 0; i < length; i++) {
    const [low, high] = rng.pick(pools);
    text += String.fromCodePoint(rng.range(low, high));
    if (rng.next() < 0.05) text += '\u200d'; // zero-width joiner
  }
  return text;
}

test('ids: 256 bytes then the special tokens, inside the default vocabSize with spare ids', () => {
  const ids = Object.values(byteSpecialTokens).sort((a, b) => a - b);
  assert.deepEqual(ids, [256, 257, 258, 259, 260, 261, 262]);
  assert.equal(byteTokenizer.vocabSize, 263);
  assert.ok(byteTokenizer.vocabSize < modelConfigSchema.parse({}).vocabSize);
});

test('encode gives UTF-8 bytes', () => {
  assert.deepEqual(byteTokenizer.encode('aé😀'), [0x61, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80]);
  assert.deepEqual(byteTokenizer.encode(''), []);
});

test('decode(encode(s)) === s for random unicode text', () => {
  const rng = new Rng(7);
  for (let i = 0; i < 300; i++) {
    const text = randomText(rng, rng.range(0, 40));
    assert.equal(byteTokenizer.decode(byteTokenizer.encode(text)), text);
  }
  const fixed = ['e\u0301', '👩‍👩‍👧‍👦', '中文字符', '\u0000\uffff', '\ufeffBOM first'];
  for (const text of fixed) assert.equal(byteTokenizer.decode(byteTokenizer.encode(text)), text);
});

test('a lone surrogate is encoded as U+FFFD', () => {
  assert.deepEqual(byteTokenizer.encode('\ud800'), [0xef, 0xbf, 0xbd]);
  assert.equal(byteTokenizer.decode(byteTokenizer.encode('a\udc00b')), 'a\ufffdb');
});

test('special tokens are not parsed from text, and decode writes their text form', () => {
  const ids = byteTokenizer.encode('<|end|>');
  assert.equal(ids.length, 7);
  assert.ok(ids.every((id) => id < 256));
  const mixed = [byteSpecialTokens.user, ...byteTokenizer.encode('hi'), byteSpecialTokens.end];
  assert.equal(byteTokenizer.decode(mixed), '<|user|>hi<|end|>');
  assert.equal(byteTokenizer.decode(mixed, { skipSpecialTokens: true }), 'hi');
});

test('decode rejects ids outside the vocabulary', () => {
  assert.throws(() => byteTokenizer.decode([263]), InvalidArgumentError);
  assert.throws(() => byteTokenizer.decode([-1]), InvalidArgumentError);
});

test('invalid UTF-8 decodes to U+FFFD', () => {
  assert.equal(byteTokenizer.decode([0x61, 0x80, 0x62]), 'a\ufffdb');
  assert.equal(byteTokenizer.decode([0xf0, 0x9f]), '\ufffd');
});

test('streaming decode holds back partial UTF-8 sequences', () => {
  const decoder = new StreamingDecoder(byteTokenizer);
  const ids = byteTokenizer.encode('a😀');
  const pieces = ids.map((id) => decoder.push(id));
  assert.deepEqual(pieces, ['a', '', '', '', '😀']);
  assert.equal(decoder.push(byteSpecialTokens.end), '<|end|>');
  assert.equal(decoder.flush(), '');
});

test('streaming decode: a special token cuts a partial sequence into U+FFFD', () => {
  const decoder = new StreamingDecoder(byteTokenizer);
  assert.equal(decoder.push(0xe4), '');
  assert.equal(decoder.push(byteSpecialTokens.end), '\ufffd<|end|>');
});

test('decode with skipSpecialTokens drops special tokens without cutting the bytes around them (as transformers does)', () => {
  // 0xCE 0xA4 is "Τ" (U+03A4); transformers' decode(skip_special_tokens=True) joins the bytes.
  assert.equal(byteTokenizer.decode([0xce, byteSpecialTokens.bos, 0xa4], { skipSpecialTokens: true }), 'Τ');
  assert.equal(byteTokenizer.decode([0xce, byteSpecialTokens.bos, 0xa4]), '\ufffd<|bos|>\ufffd');
  const decoder = new StreamingDecoder(byteTokenizer, { skipSpecialTokens: true });
  assert.deepEqual([decoder.push(0xce), decoder.push(byteSpecialTokens.end), decoder.push(0xa4)], ['', '', 'Τ']);
});

test('streaming decode joined equals whole decode for random text', () => {
  const rng = new Rng(11);
  for (let i = 0; i < 50; i++) {
    const text = randomText(rng, 20);
    const decoder = new StreamingDecoder(byteTokenizer);
    let joined = '';
    for (const id of byteTokenizer.encode(text)) joined += decoder.push(id);
    assert.equal(joined + decoder.flush(), text);
  }
});

test('tokenizer.json: GPT-2 byte table is a bijection and vocab maps byte b to id b', () => {
  const table = bytesToUnicode();
  assert.equal(new Set(table).size, 256);
  assert.equal(table[0x41], 'A');
  assert.equal(table[0x20], 'Ġ');
  const json = byteTokenizer.toTokenizerJson() as {
    model: { vocab: Record<string, number> };
    added_tokens: { id: number; content: string }[];
  };
  table.forEach((char, byte) => {
    assert.equal(json.model.vocab[char], byte);
  });
  assert.deepEqual(
    json.added_tokens.map((t) => [t.id, t.content]),
    [
      [256, '<|pad|>'],
      [257, '<|bos|>'],
      [258, '<|end|>'],
      [259, '<|system|>'],
      [260, '<|user|>'],
      [261, '<|assistant|>'],
      [262, '<|tool|>'],
    ],
  );
});
