import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { TransformerModel } from '../model/model.ts';
import { BuiltinPolicy } from './builtin-policy.ts';
import { policyContract } from './contract.ts';

/** A tiny random model, created once and shared (compiled functions are cached per model). */
const tinyModel = TransformerModel.create(
  { vocabSize: 272, hiddenSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 64, maxSeqLen: 128 },
  { seed: 1 },
);

policyContract('builtin', async () => new BuiltinPolicy({ model: await tinyModel }), { trainable: true });

test('builtin: the window is the model maxSeqLen; a tokenizer larger than the vocabulary is rejected', async () => {
  const model = await tinyModel;
  assert.equal(new BuiltinPolicy({ model }).contextWindow, 128);
  const big = { ...new BuiltinPolicy({ model }).tokenizer, vocabSize: 300 };
  assert.throws(() => new BuiltinPolicy({ model, tokenizer: big }), InvalidArgumentError);
  await assert.rejects(
    new BuiltinPolicy({ model }).forwardBackward({ sequences: [[1, 2]], temperature: 0 }, null as never),
    InvalidArgumentError,
  );
  await assert.rejects(new BuiltinPolicy({ model }).values({ sequences: [[1, 2]] }), InvalidArgumentError);
});

test('builtin: a spare model id (outside the tokenizer) is a valid prompt id and reads as U+FFFD', async () => {
  const policy = new BuiltinPolicy({ model: await tinyModel });
  const generation = await policy.generate({ prompt: [257, 265, 72], maxNewTokens: 2, temperature: 0 });
  assert.equal(generation.tokens.length, 2);
  await assert.rejects(policy.generate({ prompt: [257, 272], maxNewTokens: 2 }), /outside the vocabulary \[0, 272\)/);
});
