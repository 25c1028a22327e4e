import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../core/rng.ts';
import { sampleToken, type SampleOptions } from './sampling.ts';

/** The textbook rule sampleToken must reproduce exactly: float64 softmax, one stable sort of the whole vocabulary for top-p. */
function referenceSample(row: Float32Array, options: SampleOptions, rng: Rng, sampledVocab: number) {
  const inv = options.temperature > 0 ? 1 / options.temperature : 1;
  const z = Array.from(row, (l) => l * inv);
  const max = Math.max(...z);
  const p = z.map((x) => Math.exp(x - max));
  const logTotal = Math.log(p.reduce((a, b) => a + b, 0));
  let drawable = p.reduce((a, b) => a + b, 0);
  for (let i = sampledVocab; i < p.length; i++) {
    drawable -= p[i] ?? 0;
    p[i] = 0;
  }
  const ids = p.map((_, i) => i);
  const argmax = ids.slice(0, sampledVocab).reduce((best, i) => ((p[i] ?? 0) > (p[best] ?? 0) ? i : best), 0);
  const logprob = (token: number) => (z[token] ?? 0) - max - logTotal;
  if (options.temperature <= 0) return { token: argmax, logprob: logprob(argmax) };
  let candidates = ids.slice(0, sampledVocab);
  let mass = drawable;
  if (options.topP < 1) {
    const sorted = [...ids].sort((a, b) => (p[b] ?? 0) - (p[a] ?? 0));
    candidates = [];
    mass = 0;
    while (candidates.length < sorted.length && mass < options.topP * drawable) {
      const id = sorted[candidates.length] ?? 0;
      candidates.push(id);
      mass += p[id] ?? 0;
    }
  }
  let u = rng.next() * mass;
  for (const id of candidates) {
    u -= p[id] ?? 0;
    if (u <= 0) return { token: id, logprob: logprob(id) };
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
  const scratch = new Float64Array(vocab);
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
      const padded = new Float32Array(vocab + 7);
      padded.set(row, 7);
      const actual = sampleToken(padded, 7, vocab, options, rng, scratch, order, sampledVocab);
      assert.deepEqual(actual, referenceSample(row, options, reference, sampledVocab), JSON.stringify(options));
      assert.ok(actual.token < sampledVocab);
    }
  }
});

test('sampleToken refuses a row past the end of the logits', () => {
  const scratch = new Float64Array(10);
  const order = new Int32Array(10);
  assert.throws(
    () => sampleToken(new Float32Array(15), 6, 10, { temperature: 1, topP: 1 }, new Rng(1), scratch, order),
    /out of range/,
  );
});
