import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import { resolveRequest } from '../request.ts';
import { TinkerUnsupportedError } from './tinker-error.ts';
import type { GenerateRequest } from '../types.ts';
import { checkOptions } from './tinker-options.ts';
import { greedyDuplicates, rowSeed, toGeneration } from './tinker-sampling.ts';

test('a value head and an entropy term are refused at construction, naming what works instead', () => {
  assert.throws(
    () => checkOptions({ baseModel: 'm', valueHead: true }),
    (error: unknown) => error instanceof TinkerUnsupportedError && /GRPO family/.test(error.message),
  );
  assert.throws(
    () => checkOptions({ baseModel: 'm', entropyCoef: 0.01 }),
    (error: unknown) => error instanceof TinkerUnsupportedError && /entropyCoef to 0/.test(error.message),
  );
  assert.throws(() => checkOptions({ baseModel: '' }), InvalidArgumentError);
  assert.throws(() => checkOptions({ baseModel: 'm', rank: 0 }), InvalidArgumentError);
  assert.throws(() => checkOptions({ baseModel: 'm', lossReduction: 'mean' as never }), /sum, sequence-mean/);
  checkOptions({ baseModel: 'm', entropyCoef: 0, valueHead: false, lossReduction: 'sequence-mean' });
});

test('row seeds: row 0 keeps the seed, rows differ, all fit the server int32 range', () => {
  assert.equal(rowSeed(7, 0), 7);
  const seeds = [0, 1, 2, 3].map((row) => rowSeed(0xffffffff, row));
  assert.equal(new Set(seeds).size, 4);
  for (const seed of seeds) assert.ok(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 31);
});

test('a sampled sequence becomes a Generation: cut at the stop token or the first stop string', () => {
  const end = byteTokenizer.specialTokens.end;
  const request = resolveRequest({ prompt: [1, 2], maxNewTokens: 8, stopStrings: ['!'] }, byteTokenizer, Infinity);
  const hi = [...Buffer.from('hi')];
  assert.deepEqual(toGeneration([...hi, end, 65], [-1, -2, -3, -4], request, byteTokenizer), {
    tokens: [...hi, end],
    logprobs: [-1, -2, -3],
    text: 'hi',
    finishReason: 'stop',
  });
  assert.deepEqual(toGeneration([...Buffer.from('a!b')], [-1, -1, -1], request, byteTokenizer), {
    tokens: [...Buffer.from('a!')],
    logprobs: [-1, -1],
    text: 'a!',
    finishReason: 'stop',
  });
  assert.equal(toGeneration([...Buffer.from('abc')], [-1, -1, -1], request, byteTokenizer).finishReason, 'length');
});

test('greedy duplicates: equal greedy requests of a batch map to the first (the seed is ignored), sampled ones never do', () => {
  const resolve = (request: Partial<GenerateRequest>) =>
    resolveRequest({ prompt: [1, 2], maxNewTokens: 4, ...request }, byteTokenizer, Infinity);
  const batch = [
    resolve({ temperature: 0, seed: 1 }),
    resolve({ temperature: 0, maxNewTokens: 2 }),
    resolve({ temperature: 0, seed: 2 }),
    resolve({ temperature: 1, seed: 3 }),
    resolve({ temperature: 1, seed: 3 }),
    resolve({ temperature: 0, prompt: [1, 3] }),
    resolve({ temperature: 0, maxNewTokens: 2, stopStrings: ['x'] }),
  ];
  assert.deepEqual(greedyDuplicates(batch), [0, 1, 0, 3, 4, 5, 6]);
});
