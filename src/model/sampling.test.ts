import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../core/rng.ts';
import { sampleToken, type SampleOptions } from './sampling.ts';

/** The engine's probabilities for logits at a temperature: a max-shifted softmax, rounded to float32. */
function probabilitiesOf(logits: Float32Array, temperature: number): Float32Array {
  const inv = temperature > 0 ? 1 / temperature : 1;
  const z = Array.from(logits, (l) => l * inv);
  const max = Math.max(...z);
  const total = z.reduce((sum, x) => sum + Math.exp(x - max), 0);
  return Float32Array.from(z, (x) => Math.exp(x - max) / total);
}

/** The textbook rule sampleToken must reproduce exactly: a draw over the ids below sampledVocab, top-p by one stable sort of them. */
function referenceSample(p: Float32Array, options: SampleOptions, rng: Rng, sampledVocab: number) {
  const ids = Array.from({ length: sampledVocab }, (_, i) => i);
  const weight = (id: number) => p[id] ?? 0;
  const drawable = ids.reduce((sum, id) => sum + weight(id), 0);
  const argmax = ids.reduce((best, i) => (weight(i) > weight(best) ? i : best), 0);
  const logprob = (token: number) => Math.log(weight(token));
  if (options.temperature <= 0) return { token: argmax, logprob: logprob(argmax) };
  let candidates = ids;
  let mass = drawable;
  if (options.topP < 1) {
    const sorted = [...ids].sort((a, b) => weight(b) - weight(a));
    candidates = [];
    mass = 0;
    while (candidates.length < sorted.length && mass < options.topP * drawable) {
      const id = sorted[candidates.length] ?? 0;
      candidates.push(id);
      mass += weight(id);
    }
  }
  let u = rng.next() * mass;
  for (const id of candidates) {
    u -= weight(id);
    if (u <= 0 && weight(id) > 0) return { token: id, logprob: logprob(id) };
  }
  const fallback = options.topP < 1 ? (candidates.at(-1) ?? 0) : argmax;
  return { token: fallback, logprob: logprob(fallback) };
}

test('sampleToken draws exactly the reference rule: temperature, top-p over a partial sort, maxTokenId, greedy, ties', () => {
  const vocab = 3000;
  const data = new Rng(11);
  const rows = Array.from({ length: 24 }, (_, r) =>
    Float32Array.from({ length: vocab }, () => {
      // peaked rows, flat rows and rows with many exact ties (quantised logits)
      const x = (data.next() - 0.5) * (r % 3 === 0 ? 40 : 6);
      return r % 4 === 1 ? Math.round(x) : x;
    }),
  );
  const order = new Int32Array(vocab);
  const settings: [SampleOptions, number][] = [
    [{ temperature: 1, topP: 1 }, vocab],
    [{ temperature: 0.7, topP: 0.9 }, vocab],
    [{ temperature: 1.3, topP: 0.5 }, 2500],
    [{ temperature: 1, topP: 0.999 }, vocab],
    [{ temperature: 0, topP: 1 }, 2000],
    [{ temperature: 0.5, topP: 1 }, 1200],
  ];
  for (const [options, sampledVocab] of settings) {
    const rng = new Rng(5);
    const reference = new Rng(5);
    for (const row of rows) {
      const p = probabilitiesOf(row, options.temperature);
      const padded = new Float32Array(vocab + 7);
      padded.set(p, 7);
      const actual = sampleToken(padded, 7, vocab, options, rng, order, sampledVocab);
      assert.deepEqual(actual, referenceSample(p, options, reference, sampledVocab), JSON.stringify(options));
      assert.ok(actual.token < sampledVocab);
    }
  }
});

test('sampleToken draws each token with its probability and reports log p (temperature 1, 20,000 draws)', () => {
  const p = Float32Array.of(0.5, 0.25, 0.125, 0.125, 0);
  const counts = new Array<number>(p.length).fill(0);
  const rng = new Rng(3);
  const order = new Int32Array(p.length);
  for (let i = 0; i < 20_000; i++) {
    const { token, logprob } = sampleToken(p, 0, p.length, { temperature: 1, topP: 1 }, rng, order);
    counts[token] = (counts[token] ?? 0) + 1;
    assert.equal(logprob, Math.log(p[token] ?? 0));
  }
  p.forEach((probability, token) => {
    assert.ok(Math.abs((counts[token] ?? 0) / 20_000 - probability) < 0.015, `token ${token}: ${counts[token]}`);
  });
});

test('sampleToken refuses a row past the end of the probabilities', () => {
  const order = new Int32Array(10);
  assert.throws(
    () => sampleToken(new Float32Array(15), 6, 10, { temperature: 1, topP: 1 }, new Rng(1), order),
    /out of range/,
  );
});
