/**
 * The contract every policy runs (STYLE.md "Contract tests"):
 * - a generation's ids are token ids (an id the tokenizer lacks reads as U+FFFD), one log-prob (finite, ≤ 0) per id, at most
 *   `maxNewTokens` ids, a stop token only as the last id, `text` = the ids decoded without it;
 * - the same request replays exactly; greedy (temperature 0) ignores the seed;
 * - `generateBatch` answers in request order, a batch of one equals `generate`, and equal
 *   prompts in one greedy batch get equal generations;
 * - stop strings end the text; bad requests reject with `InvalidArgumentError`;
 * - a trainable policy's `logprobs` at the sampling temperature (0.7, or the backend's `trainableChecks`) reproduce the sampling
 *   log-probs (1e-4); `forwardBackward` at that temperature hands the loss those same log-probs;
 *   `forwardBackward` + `optimStep` move them; `save` writes a checkpoint; `saveState` →
 *   `loadState` round-trips (the restored policy scores the same and takes the same next update);
 *   a fused `trainStep`, where the backend has one, gives the update of `forwardBackward` + `optimStep`;
 *   `capabilities` is declared, and a policy claiming a value head has `values`.
 *
 *   policyContract('scripted', () => new ScriptedPolicy({ reply: ['<answer>B</answer>'] }));
 *
 * `makePolicy` is called for each check and must give policies that behave alike (they may share
 * one model: the training check runs last).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { renderGenerationPrompt } from '../chat/chat-template.ts';
import { trainableContract, type TrainableChecks } from './contract-trainable.ts';
import { decodeGenerated, resolveRequest } from './request.ts';
import type { GenerateRequest, Generation, Policy } from './types.ts';

export type { TrainableChecks } from './contract-trainable.ts';

export interface PolicyContractOptions {
  /** `maxNewTokens` of the checks. Default 8. */
  maxNewTokens?: number;
  /** Also run the TrainablePolicy checks (logprobs, forwardBackward, optimStep, save). Default false. */
  trainable?: boolean;
  /**
   * What the trainable checks hold the backend to, where a backend declares less than the
   * built-in model (whose defaults are the strictest). A remote backend passes what its server does.
   */
  trainableChecks?: TrainableChecks;
}

/** What every group of checks shares: the policy maker, the generation budget and a prompt of the policy's own template. */
export interface ContractContext {
  makePolicy: () => Policy | Promise<Policy>;
  maxNewTokens: number;
  promptOf: (policy: Policy, question: string) => number[];
}

export function policyContract(
  name: string,
  makePolicy: () => Policy | Promise<Policy>,
  options: PolicyContractOptions = {},
): void {
  const context: ContractContext = {
    makePolicy,
    maxNewTokens: options.maxNewTokens ?? 8,
    promptOf: (policy, question) =>
      renderGenerationPrompt(
        [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: question },
        ],
        { tokenizer: policy.tokenizer },
      ).tokens,
  };
  describe(`policy contract: ${name}`, () => {
    generationContract(context);
    batchContract(context);
    requestContract(context);
    // Last: the trainable checks update the weights, which `makePolicy` may share.
    if (options.trainable === true) trainableContract(context, options.trainableChecks);
  });
}

/** A generation's ids, log-probs, stop token and text, as the contract states them. */
function checkGeneration(policy: Policy, request: GenerateRequest, generation: Generation): void {
  const resolved = resolveRequest(request, policy.tokenizer, policy.contextWindow);
  const { tokens, logprobs } = generation;
  assert.equal(logprobs.length, tokens.length, 'one log-prob per generated id');
  assert.ok(
    tokens.length >= 1 && tokens.length <= resolved.maxNewTokens,
    `${tokens.length} ids for maxNewTokens ${resolved.maxNewTokens}`,
  );
  assert.ok(
    resolved.prompt.length + tokens.length <= policy.contextWindow,
    'prompt + generation fit the context window',
  );
  for (const id of tokens) assert.ok(Number.isInteger(id) && id >= 0, `id ${id} is a token id`);
  for (const logprob of logprobs)
    assert.ok(Number.isFinite(logprob) && logprob <= 1e-6, `log-prob ${logprob} is finite and <= 0`);
  const stopIndex = tokens.findIndex((id) => resolved.stopTokens.includes(id));
  assert.ok(stopIndex === -1 || stopIndex === tokens.length - 1, 'a stop token can only be the last id');
  if (stopIndex >= 0) assert.equal(generation.finishReason, 'stop');
  const body = stopIndex >= 0 ? tokens.slice(0, -1) : tokens;
  assert.equal(
    generation.text,
    decodeGenerated(policy.tokenizer, body),
    'text is the decoded ids without the stop token',
  );
  for (const stop of resolved.stopStrings) {
    const before = decodeGenerated(policy.tokenizer, body.slice(0, -1));
    assert.ok(!before.includes(stop), `generation continued past the stop string ${JSON.stringify(stop)}`);
    if (generation.text.includes(stop)) assert.equal(generation.finishReason, 'stop');
  }
}

/** `generate`: well-formed generations, exact replay, greedy ignoring the seed. */
function generationContract({ makePolicy, maxNewTokens, promptOf }: ContractContext): void {
  test('generate: token ids, one log-prob each, text = decoded ids without the stop token', async () => {
    const policy = await makePolicy();
    for (const [question, seed] of [
      ['Say hi.', 1],
      ['Count to three.', 2],
    ] as const) {
      const request = { prompt: promptOf(policy, question), maxNewTokens, seed };
      checkGeneration(policy, request, await policy.generate(request));
    }
  });

  test('the same request replays exactly; greedy ignores the seed', async () => {
    const prompt = promptOf(await makePolicy(), 'Say hi.');
    const sampled = { prompt, maxNewTokens, temperature: 1, seed: 7 };
    assert.deepEqual(await (await makePolicy()).generate(sampled), await (await makePolicy()).generate(sampled));
    const greedy = await (await makePolicy()).generate({ prompt, maxNewTokens, temperature: 0, seed: 1 });
    assert.deepEqual(await (await makePolicy()).generate({ prompt, maxNewTokens, temperature: 0, seed: 2 }), greedy);
  });
}

/**
 * Two greedy generations of one request agree: the same ids, text and finish reason, and log-probs
 * within float32 rounding. Not bit for bit: a server batches the requests it holds at the moment
 * (policy-server's batcher), and a row's sums run in another order in a batch of another size.
 */
function assertSameGeneration(actual: Generation, expected: Generation, what: string): void {
  assert.deepEqual(actual.tokens, expected.tokens, `${what}: same token ids`);
  assert.equal(actual.text, expected.text, `${what}: same text`);
  assert.equal(actual.finishReason, expected.finishReason, `${what}: same finish reason`);
  assert.equal(actual.logprobs.length, expected.logprobs.length, `${what}: one log-prob per token`);
  actual.logprobs.forEach((logprob, i) => {
    const other = at(expected.logprobs, i, 'logprobs');
    assert.ok(
      Math.abs(logprob - other) <= 1e-6 * Math.max(1, Math.abs(other)),
      `${what}: token ${i} log-prob ${logprob} vs ${other}`,
    );
  });
}

/** `generateBatch`: request order, a batch of one, equal prompts in a greedy batch. */
function batchContract({ makePolicy, maxNewTokens, promptOf }: ContractContext): void {
  test('generateBatch: request order, a batch of one equals generate, equal prompts in a greedy batch agree', async () => {
    const policy = await makePolicy();
    const a = promptOf(policy, 'Say hi.');
    const b = promptOf(policy, 'Name a colour, please, a bright one.');
    const single = { prompt: b, maxNewTokens, seed: 3 };
    assert.deepEqual(await (await makePolicy()).generateBatch([single]), [await (await makePolicy()).generate(single)]);

    const requests: GenerateRequest[] = [
      { prompt: a, maxNewTokens, temperature: 0 },
      { prompt: b, maxNewTokens: 2, temperature: 0 },
      { prompt: a, maxNewTokens, temperature: 0 },
      { prompt: b, maxNewTokens, temperature: 0.5, seed: 4 },
    ];
    const generations = await (await makePolicy()).generateBatch(requests);
    assert.equal(generations.length, requests.length);
    generations.forEach((generation, i) => {
      checkGeneration(policy, at(requests, i, 'requests'), generation);
    });
    assert.ok(at(generations, 1).tokens.length <= 2, 'the second request keeps its own maxNewTokens');
    assertSameGeneration(at(generations, 2), at(generations, 0), 'equal prompts with equal options in one batch');
    assert.deepEqual(await policy.generateBatch([]), []);
  });
}

/** Stop strings and `maxNewTokens` bound a generation; bad requests are refused. */
function requestContract({ makePolicy, maxNewTokens, promptOf }: ContractContext): void {
  test('stop strings end the text; maxNewTokens bounds it', async () => {
    const policy = await makePolicy();
    const prompt = promptOf(policy, 'Say hi.');
    for (const stopStrings of [['e'], ['>'], [' ']]) {
      const request = { prompt, maxNewTokens: 2 * maxNewTokens, stopStrings, seed: 5 };
      checkGeneration(policy, request, await policy.generate(request));
    }
    const short = await policy.generate({ prompt, maxNewTokens: 1 });
    assert.equal(short.tokens.length, 1);
  });

  test('bad requests reject with InvalidArgumentError', async () => {
    const policy = await makePolicy();
    const prompt = promptOf(policy, 'Say hi.');
    const empty: GenerateRequest = { prompt: [], maxNewTokens };
    const bad: GenerateRequest[] = [
      empty,
      { prompt, maxNewTokens: 0 },
      { prompt: [...prompt, -1], maxNewTokens },
      { prompt: [...prompt, 1.5], maxNewTokens },
      { prompt, maxNewTokens, temperature: -1 },
      { prompt, maxNewTokens, topP: 0 },
    ];
    if (Number.isFinite(policy.contextWindow))
      bad.push({ prompt: new Array(policy.contextWindow).fill(at(prompt, 0, 'prompt')), maxNewTokens });
    for (const request of bad) await assert.rejects(policy.generate(request), InvalidArgumentError);
    await assert.rejects(policy.generateBatch([{ prompt, maxNewTokens }, empty]), InvalidArgumentError);
  });
}
