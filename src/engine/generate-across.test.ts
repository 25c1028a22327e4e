import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../core/rng.ts';
import type { HostParams } from '../model/config.ts';
import type { GeneratedRow, GenerateOptions } from '../model/generate-options.ts';
import { generate } from './generate.ts';
import { generateAcross, type AcrossGroup } from './generate-across.ts';
import { sessionsMadeBy } from './onnx/sessions-made-by.ts';
import { TransformerModel } from './transformer-model.ts';
import { tinyLoraConfig, tinyModelConfig } from './tiny-model-fixture.ts';

/** Adapters with A and B drawn from N(0, 0.3²): forks that answer differently (a fresh B is 0). */
async function randomAdapters(model: TransformerModel, seed: number): Promise<HostParams> {
  const rng = new Rng(seed);
  const adapters = await model.adapterParams();
  for (const tensor of adapters.values())
    for (let i = 0; i < tensor.data.length; i++) tensor.data[i] = 0.3 * rng.normal();
  return adapters;
}

async function forks(count: number): Promise<TransformerModel[]> {
  const parent = await TransformerModel.create(tinyModelConfig, { seed: 2, lora: tinyLoraConfig });
  const models = [parent];
  for (let i = 1; i < count; i++)
    models.push(await parent.forkAdapters({ adapters: await randomAdapters(parent, 10 + i) }));
  parent.setAdapters(await randomAdapters(parent, 10));
  return models;
}

function prompts(seed: number, count: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => Array.from({ length: rng.range(3, 12) }, () => rng.int(40)));
}

/** Each group generated on its own, with its own model and options. */
function separately(groups: readonly AcrossGroup[]): Promise<GeneratedRow[][]> {
  return Promise.all(groups.map((group) => generate(group.model, group.prompts, group.options)));
}

function assertSameRows(actual: GeneratedRow[][], expected: GeneratedRow[][]): void {
  assert.equal(actual.length, expected.length);
  expected.forEach((rows, g) => {
    assert.equal(actual[g]?.length, rows.length, `group ${g} rows`);
    rows.forEach((row, i) => {
      const got = actual[g]![i]!;
      assert.deepEqual(got.tokens, row.tokens, `group ${g} row ${i} tokens`);
      assert.equal(got.finishReason, row.finishReason, `group ${g} row ${i} finish`);
      assert.equal(got.text, row.text);
      got.logprobs.forEach((lp, t) => {
        assert.ok(
          Math.abs(lp - row.logprobs[t]!) <= 1e-5,
          `group ${g} row ${i} token ${t}: ${lp} vs ${row.logprobs[t]}`,
        );
      });
    });
  });
}

/** sessionsMadeBy with the count. */
async function countedSessions<R>(body: () => Promise<R>) {
  const { result, sessions } = await sessionsMadeBy(body);
  return { result, made: sessions.length, sessions };
}

const decode = (tokens: readonly number[]) => tokens.join(' ');

test('generateAcross: three forks (one without rows) in one call give each fork the rows it generates alone', async () => {
  const [a, b, c, d] = await forks(4);
  const shared = prompts(3, 2); // the same prompts in two groups: prefilled apart (other adapters)
  const groups: AcrossGroup[] = [
    {
      model: a!,
      prompts: [...shared, ...prompts(4, 3)],
      options: { maxNewTokens: 10, temperature: 1, seed: 7, decode },
    },
    { model: b!, prompts: [], options: { maxNewTokens: 10, seed: 7 } },
    {
      model: c!,
      prompts: [...prompts(5, 2), ...shared],
      options: { maxNewTokens: 6, temperature: 0.7, seed: 9, decode },
    },
    {
      model: d!,
      prompts: prompts(6, 3),
      options: { maxNewTokens: 12, temperature: 1.2, topP: 0.9, seed: 7, stopTokens: [5, 9] },
    },
  ];
  const first = await countedSessions(() => generateAcross(groups));
  assert.equal(first.made, 2, "the forks' plain session, then a grouped one (3 adapter sets) in its place");
  assert.deepEqual(
    first.sessions.map((session) => session.live),
    [false, true],
    'the plain session is freed: one copy of the base in onnxruntime',
  );
  const again = await countedSessions(() => generateAcross(groups));
  assert.equal(again.made, 0, 'the next call reuses both');
  assert.deepEqual(again.result, first.result);
  const together = first.result;
  const alone = await separately(groups);
  assertSameRows(together, alone);
  assert.equal(together[1]!.length, 0);
  // The forks do answer differently: the same prompts gave other tokens under other adapters.
  assert.notDeepEqual(
    together[0]!.slice(0, 2).map((r) => r.tokens),
    together[2]!.slice(2).map((r) => r.tokens),
  );
  assert.ok(
    together[3]!.some((row) => row.finishReason === 'stop'),
    'some row of group 3 stopped on a stop token',
  );
});

test('generateAcross: groups without rows inside runs (a prefill run of one group, a finished group compacted away)', async () => {
  const [a, b, c] = await forks(3);
  const options = (maxNewTokens: number, seed: number): GenerateOptions => ({
    maxNewTokens,
    seed,
    prefillTokenBudget: 16, // one or two prompts per prefill run: most runs hold one group's rows only
  });
  const groups: AcrossGroup[] = [
    { model: a!, prompts: prompts(7, 4), options: options(2, 1) }, // done after 2 tokens: compacted away
    { model: b!, prompts: prompts(8, 2), options: options(9, 2) },
    { model: c!, prompts: prompts(9, 2), options: options(9, 3) },
  ];
  assertSameRows(await generateAcross(groups), await separately(groups));
});

test('generateAcross: one group with rows runs on its own session, the same numbers as generate', async () => {
  const [a, b] = await forks(2);
  const groups: AcrossGroup[] = [
    { model: a!, prompts: [], options: { maxNewTokens: 5 } },
    { model: b!, prompts: prompts(11, 3), options: { maxNewTokens: 5, seed: 4 } },
  ];
  await generate(b!, [[1, 2]], { maxNewTokens: 1 }); // the forks' plain session exists
  const { result, made } = await countedSessions(() => generateAcross(groups));
  assert.equal(made, 0, 'no grouped session for one group with rows');
  assert.deepEqual(result, [[], await generate(b!, groups[1]!.prompts, groups[1]!.options)]);
});

test('generateAcross: refuses models that do not share a base, full-weight models and other session options', async () => {
  const [a, b] = await forks(2);
  const stranger = await TransformerModel.create(tinyModelConfig, { seed: 2, lora: tinyLoraConfig });
  const full = await TransformerModel.create(tinyModelConfig, { seed: 2 });
  const group = (model: TransformerModel): AcrossGroup => ({
    model,
    prompts: [[1, 2, 3]],
    options: { maxNewTokens: 2 },
  });
  await assert.rejects(generateAcross([group(a!), group(stranger)]), /group 1's model does not share group 0's base/);
  await assert.rejects(generateAcross([group(full), group(a!)]), /group 0's model trains its full weights/);
  await b!.inferenceSession({ threads: 1 });
  await assert.rejects(generateAcross([group(a!), group(b!)]), /group 1's model generates with other session options/);
});

test('generateAcross: a fork trained between calls generates with its new adapters', async () => {
  const [a, b] = await forks(2);
  const groups: AcrossGroup[] = [
    { model: a!, prompts: prompts(12, 2), options: { maxNewTokens: 6, seed: 1 } },
    { model: b!, prompts: prompts(13, 2), options: { maxNewTokens: 6, seed: 1 } },
  ];
  const before = await generateAcross(groups);
  b!.setAdapters(await randomAdapters(b!, 99));
  const after = await generateAcross(groups);
  assertSameRows(after, await separately(groups));
  assert.deepEqual(after[0], before[0]);
  assert.notDeepEqual(
    after[1]!.map((r) => r.tokens),
    before[1]!.map((r) => r.tokens),
  );
});

test('generateAcross: the first joint call moves the forks from their plain session onto ONE grouped session', async () => {
  const [a, b] = await forks(2);
  const groups: AcrossGroup[] = [
    { model: a!, prompts: prompts(14, 3), options: { maxNewTokens: 8, seed: 3 } },
    { model: b!, prompts: prompts(15, 3), options: { maxNewTokens: 8, seed: 4 } },
  ];
  const before = await separately(groups); // on the plain session
  const { result, made, sessions } = await countedSessions(async () => {
    const together = await generateAcross(groups);
    return { together, alone: await separately(groups) };
  });
  assert.equal(made, 1, 'the grouped session; the forks’ own calls then run on it too');
  assert.ok(sessions[0]!.live);
  assertSameRows(result.alone, before);
  assertSameRows(result.together, result.alone);
  // A fork's own calls on that session: the numbers of the plain graph (a model of its own, no forks).
  const plain = await TransformerModel.fromParams(tinyModelConfig, await b!.baseParams(), {
    lora: tinyLoraConfig,
    adapters: await b!.adapterParams(),
  });
  assertSameRows([result.alone[1]!], [await generate(plain, groups[1]!.prompts, groups[1]!.options)]);
  const scoredFork = (await b!.inferenceSession()).score(groups[1]!.prompts);
  const scoredPlain = (await plain.inferenceSession()).score(groups[1]!.prompts);
  assert.deepEqual((await scoredFork).logprobs, (await scoredPlain).logprobs, 'scoring on it too');
});

test('generateAcross: a fork’s call running when the forks move to the grouped session finishes with its numbers', async () => {
  const [a, b] = await forks(2);
  const solo = { prompts: prompts(16, 4), options: { maxNewTokens: 12, seed: 8 } };
  const expected = await generate(a!, solo.prompts, solo.options); // makes the plain session
  const groups: AcrossGroup[] = [
    { model: a!, prompts: prompts(17, 2), options: { maxNewTokens: 6, seed: 1 } },
    { model: b!, prompts: prompts(18, 2), options: { maxNewTokens: 6, seed: 2 } },
  ];
  const [running, together, during] = await Promise.all([
    generate(a!, solo.prompts, solo.options), // on the plain session while it is replaced
    generateAcross(groups),
    generate(b!, solo.prompts, solo.options), // starts during the move: waits for the grouped session
  ]);
  assertSameRows([running], [expected]);
  assertSameRows(together, await separately(groups));
  assertSameRows([during], [await generate(b!, solo.prompts, solo.options)]);
});
