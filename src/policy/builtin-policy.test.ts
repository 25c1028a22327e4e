import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rlLoss } from '../algorithms/rl-loss.ts';
import { InvalidArgumentError } from '../core/errors.ts';
import { Rng } from '../core/rng.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from './builtin-policy.ts';
import { policyContract } from './contract.ts';

/** Tiny random models, created once and shared: every weight trained, and LoRA adapters on frozen weights. */
const config = {
  vocabSize: 272,
  hiddenSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 64,
  maxSeqLen: 128,
};
const tinyModel = TransformerModel.create(config, { seed: 1 });
const loraModel = TransformerModel.create(config, { seed: 2, lora: { rank: 4, alpha: 8 } });

policyContract('builtin', async () => new BuiltinPolicy({ model: await tinyModel }), { trainable: true });
policyContract('builtin LoRA', async () => new BuiltinPolicy({ model: await loraModel }), { trainable: true });

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

test('release frees the sessions and twice is harmless; the next call makes them again with the same numbers', async () => {
  const policy = new BuiltinPolicy({ model: await TransformerModel.create(config, { seed: 3 }) });
  const request = { prompt: [1, 2, 3], maxNewTokens: 4, temperature: 0 };
  const before = await policy.generate(request);
  const scored = await policy.logprobs({ sequences: [[1, 2, 3, 4, 5]] });
  await policy.release();
  await policy.release();
  assert.deepEqual(await policy.generate(request), before);
  assert.deepEqual(await policy.logprobs({ sequences: [[1, 2, 3, 4, 5]] }), scored);
  await policy.release();
});

test('builtin: an aborted signal stops the generation at its next decode step and rejects with its reason', async () => {
  const policy = new BuiltinPolicy({ model: await tinyModel });
  const requests = [1, 2].map((first) => ({
    prompt: [first, 5, 9],
    maxNewTokens: 100,
    temperature: 1,
    stopTokens: [],
  }));
  const before = new AbortController();
  const early = new Error('no longer wanted');
  before.abort(early);
  let sampled = 0;
  await assert.rejects(
    policy.generateBatch(requests, { signal: before.signal, onToken: () => sampled++ }),
    (error) => error === early,
  );
  assert.equal(sampled, 0, 'aborted before it began: nothing sampled');

  const during = new AbortController();
  const reason = new Error('the clients left');
  const ids: number[] = [];
  await assert.rejects(
    policy.generateBatch(requests, {
      signal: during.signal,
      onToken: (row, token) => {
        if (row === 0) ids.push(token);
        if (ids.length === 3) during.abort(reason); // between two decode steps of the batch
      },
    }),
    (error) => error === reason,
  );
  assert.equal(ids.length, 3, 'no id sampled after the abort reaches the caller');

  const elsewhere = new AbortController();
  let steps = 0;
  await assert.rejects(
    policy.generateBatch(requests, {
      signal: elsewhere.signal,
      onToken: (row) => {
        if (row === 0 && ++steps === 2) setImmediate(() => elsewhere.abort()); // from another task
      },
    }),
    (error) => error instanceof DOMException && error.name === 'AbortError',
  );
  assert.ok(steps < 100, `stopped after ${steps} of 100 steps`);
  const whole = await policy.generateBatch(requests, { signal: new AbortController().signal });
  assert.deepEqual(
    whole.map((generation) => generation.tokens.length),
    [100, 100],
    'a signal never aborted changes nothing',
  );
});

test('loadState of a LoRA policy with a value head restores the trained head: the loaded policy scores the same values', async () => {
  const withHead = { ...config, valueHead: true };
  const make = async () =>
    new BuiltinPolicy({ model: await TransformerModel.create(withHead, { seed: 5, lora: { rank: 2 } }) });
  const [trained, loaded] = await Promise.all([make(), make()]);
  const batch = {
    sequences: [
      [1, 5, 9, 2, 7, 3],
      [4, 8, 6, 1],
    ],
  };
  const rng = new Rng(11);
  const draw = () => batch.sequences.map((row) => Float32Array.from(row, (_, t) => (t > 0 ? rng.next() - 0.5 : 0)));
  const loss = rlLoss({
    oldLogprobs: await trained.logprobs(batch),
    oldValues: await trained.values(batch),
    advantages: draw(),
    returns: draw(),
    lossMask: batch.sequences.map((row) => Float32Array.from(row, (_, t) => (t > 0 ? 1 : 0))),
  });
  await trained.forwardBackward(batch, loss);
  await trained.optimStep({ learningRate: 0.05 });
  const values = await trained.values(batch);
  assert.notDeepEqual(values, await loaded.values(batch), 'the head trained (a fresh one scores otherwise)');
  await loaded.loadState(await trained.saveState());
  assert.deepEqual(await loaded.values(batch), values);
  assert.deepEqual(await loaded.logprobs(batch), await trained.logprobs(batch));
  await Promise.all([trained.release(), loaded.release()]);
});
