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
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import type { TokenLoss } from '../core/loss.ts';
import { renderGenerationPrompt } from '../chat/chat-template.ts';
import { decodeGenerated, resolveRequest } from './request.ts';
import { isTrainablePolicy, type GenerateRequest, type Generation, type Policy } from './types.ts';

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

export interface TrainableChecks {
  /** The temperature the checks sample, score and train at. Default 0.7; a backend that scores at temperature 1 only (Tinker) passes 1. */
  scoringTemperature?: number;
  /** `optimStep` reports a positive gradient norm. Default true; false also accepts NaN (the backend does not report it). */
  reportsGradNorm?: boolean;
  /** The files `save(path)` writes into the folder. Default a Hugging Face folder: config.json, model.safetensors, tokenizer.json. */
  checkpointFiles?: readonly string[];
}

export function policyContract(name: string, makePolicy: () => Policy | Promise<Policy>, options: PolicyContractOptions = {}): void {
  const maxNewTokens = options.maxNewTokens ?? 8;
  const { scoringTemperature = 0.7, reportsGradNorm = true, checkpointFiles = ['config.json', 'model.safetensors', 'tokenizer.json'] } = options.trainableChecks ?? {};

  const promptOf = (policy: Policy, question: string): number[] =>
    renderGenerationPrompt([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: question }], { tokenizer: policy.tokenizer }).tokens;

  function checkGeneration(policy: Policy, request: GenerateRequest, generation: Generation): void {
    const resolved = resolveRequest(request, policy.tokenizer, policy.contextWindow);
    const { tokens, logprobs } = generation;
    assert.equal(logprobs.length, tokens.length, 'one log-prob per generated id');
    assert.ok(tokens.length >= 1 && tokens.length <= resolved.maxNewTokens, `${tokens.length} ids for maxNewTokens ${resolved.maxNewTokens}`);
    assert.ok(resolved.prompt.length + tokens.length <= policy.contextWindow, 'prompt + generation fit the context window');
    for (const id of tokens) assert.ok(Number.isInteger(id) && id >= 0, `id ${id} is a token id`);
    for (const logprob of logprobs) assert.ok(Number.isFinite(logprob) && logprob <= 1e-6, `log-prob ${logprob} is finite and <= 0`);
    const stopIndex = tokens.findIndex((id) => resolved.stopTokens.includes(id));
    assert.ok(stopIndex === -1 || stopIndex === tokens.length - 1, 'a stop token can only be the last id');
    if (stopIndex >= 0) assert.equal(generation.finishReason, 'stop');
    const body = stopIndex >= 0 ? tokens.slice(0, -1) : tokens;
    assert.equal(generation.text, decodeGenerated(policy.tokenizer, body), 'text is the decoded ids without the stop token');
    for (const stop of resolved.stopStrings) {
      const before = decodeGenerated(policy.tokenizer, body.slice(0, -1));
      assert.ok(!before.includes(stop), `generation continued past the stop string ${JSON.stringify(stop)}`);
      if (generation.text.includes(stop)) assert.equal(generation.finishReason, 'stop');
    }
  }

  describe(`policy contract: ${name}`, () => {
    test('generate: token ids, one log-prob each, text = decoded ids without the stop token', async () => {
      const policy = await makePolicy();
      for (const [question, seed] of [['Say hi.', 1], ['Count to three.', 2]] as const) {
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
      generations.forEach((generation, i) => checkGeneration(policy, requests[i]!, generation));
      assert.ok(generations[1]!.tokens.length <= 2, 'the second request keeps its own maxNewTokens');
      assert.deepEqual(generations[2], generations[0], 'equal prompts with equal options in one batch agree');
      assert.deepEqual(await policy.generateBatch([]), []);
    });

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
      const bad: GenerateRequest[] = [
        { prompt: [], maxNewTokens },
        { prompt, maxNewTokens: 0 },
        { prompt: [...prompt, -1], maxNewTokens },
        { prompt: [...prompt, 1.5], maxNewTokens },
        { prompt, maxNewTokens, temperature: -1 },
        { prompt, maxNewTokens, topP: 0 },
      ];
      if (Number.isFinite(policy.contextWindow)) bad.push({ prompt: new Array(policy.contextWindow).fill(prompt[0]!), maxNewTokens });
      for (const request of bad) await assert.rejects(policy.generate(request), InvalidArgumentError);
      await assert.rejects(policy.generateBatch([{ prompt, maxNewTokens }, bad[0]!]), InvalidArgumentError);
    });

    if (options.trainable === true) test('trainable: logprobs reproduce the sampling log-probs; forwardBackward + optimStep move them; save writes a checkpoint', async () => {
      const policy = await makePolicy();
      assert.ok(isTrainablePolicy(policy), 'the policy implements TrainablePolicy');
      const prompt = promptOf(policy, 'Say hi.');
      const temperature = scoringTemperature;
      const generation = await policy.generate({ prompt, maxNewTokens, temperature, seed: 9 });
      const sequence = [...prompt, ...generation.tokens];
      const [scored] = await policy.logprobs({ sequences: [sequence], temperature });
      assert.equal(scored!.length, sequence.length);
      assert.equal(scored![0], 0);
      generation.logprobs.forEach((logprob, i) => {
        const t = prompt.length + i;
        assert.ok(Math.abs(scored![t]! - logprob) < 1e-4, `token ${t}: scored ${scored![t]} vs sampled ${logprob}`);
      });

      const mask = sequence.map((_, t) => (t >= prompt.length ? 1 : 0));
      const [before] = await policy.logprobs({ sequences: [sequence] });
      const report = await policy.forwardBackward({ sequences: [sequence] }, negativeLogLikelihood(mask));
      assert.ok(Number.isFinite(report.loss));
      assert.equal(report.tokens, generation.tokens.length);
      const step = await policy.optimStep({ learningRate: 1e-2, maxGradNorm: 0 });
      if (reportsGradNorm) assert.ok(step.gradNorm > 0, `gradNorm ${step.gradNorm} is reported and positive`);
      else assert.ok(Number.isNaN(step.gradNorm) || step.gradNorm > 0, `gradNorm ${step.gradNorm} (NaN: the backend does not report it)`);
      const [after] = await policy.logprobs({ sequences: [sequence] });
      let gained = 0;
      for (let t = prompt.length; t < sequence.length; t++) gained += after![t]! - before![t]!;
      assert.ok(gained > 0, `one likelihood step raised the generated tokens' log-prob (by ${gained})`);

      const dir = await mkdtemp(join(tmpdir(), 'agentrl-policy-'));
      try {
        await policy.save(join(dir, 'checkpoint'));
        const files = await readdir(join(dir, 'checkpoint'));
        for (const file of checkpointFiles) assert.ok(files.includes(file), `${file} written`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    if (options.trainable === true) test('trainable: forwardBackward at a temperature trains on the log-probs logprobs gives at it; capabilities are declared', async () => {
      const policy = await makePolicy();
      assert.ok(isTrainablePolicy(policy), 'the policy implements TrainablePolicy');
      assert.equal(typeof policy.backend, 'string');
      for (const key of ['valueHead', 'entropy', 'gradientClipping'] as const) assert.equal(typeof policy.capabilities[key], 'boolean', `capabilities.${key}`);
      if (policy.capabilities.valueHead) assert.equal(typeof policy.values, 'function', 'a value head comes with values()');
      const { sequence, mask } = await sampledSequence(policy, promptOf(policy, 'Count to three.'), maxNewTokens);
      const temperature = scoringTemperature;
      const [scored] = await policy.logprobs({ sequences: [sequence], temperature });
      let seen: Float32Array | undefined;
      const probe: TokenLoss = {
        name: 'contract-probe',
        dependsOnCurrent: true,
        compute(input) {
          seen = input.logprobs[0];
          return negativeLogLikelihood(mask).compute(input);
        },
      };
      await policy.forwardBackward({ sequences: [sequence], temperature }, probe);
      assert.ok(seen !== undefined, 'the loss read the current log-probs');
      for (let t = 1; t < sequence.length; t++) assert.ok(Math.abs(seen![t]! - scored![t]!) < 1e-4, `token ${t}: trained on ${seen![t]} vs scored ${scored![t]}`);
      await policy.optimStep({ learningRate: 1e-3, maxGradNorm: 0 });
    });

    if (options.trainable === true) test('trainable: saveState → loadState restores the log-probs and the next update; a fused trainStep equals forwardBackward + optimStep', async () => {
      const policy = await makePolicy();
      assert.ok(isTrainablePolicy(policy), 'the policy implements TrainablePolicy');
      const { sequence, mask } = await sampledSequence(policy, promptOf(policy, 'Say hi.'), maxNewTokens);
      const sequences = [sequence];
      const step = { learningRate: 1e-2, maxGradNorm: 0 };
      // One step first, so the state holds optimizer moments and a step counter.
      await policy.forwardBackward({ sequences }, negativeLogLikelihood(mask));
      await policy.optimStep(step);
      const saved = await policy.saveState();
      const [atSave] = await policy.logprobs({ sequences });
      await policy.forwardBackward({ sequences }, negativeLogLikelihood(mask));
      const firstReport = await policy.optimStep(step);
      const [afterNext] = await policy.logprobs({ sequences });
      assert.ok(maxGap(afterNext!, atSave!) > 0, 'the second step moved the log-probs');

      await policy.loadState(saved);
      assert.equal(maxGap((await policy.logprobs({ sequences }))[0]!, atSave!), 0, 'the restored policy scores as the saved one did');
      await policy.forwardBackward({ sequences }, negativeLogLikelihood(mask));
      const againReport = await policy.optimStep(step);
      assert.equal(againReport.step, firstReport.step, 'the step counter was restored');
      assert.equal(maxGap((await policy.logprobs({ sequences }))[0]!, afterNext!), 0, 'the restored policy takes the same next update');

      if (policy.trainStep !== undefined) {
        await policy.loadState(saved);
        const fused = await policy.trainStep({ sequences }, negativeLogLikelihood(mask), step);
        assert.equal(fused.step, firstReport.step);
        assert.ok(Math.abs(fused.gradNorm - firstReport.gradNorm) <= 1e-4 * Math.max(1, firstReport.gradNorm), `gradNorm fused ${fused.gradNorm} vs ${firstReport.gradNorm}`);
        const gap = maxGap((await policy.logprobs({ sequences }))[0]!, afterNext!);
        assert.ok(gap < 1e-4, `fused trainStep vs forwardBackward + optimStep: log-probs differ by ${gap}`);
      }
    });
  });
}

async function sampledSequence(policy: Policy, prompt: number[], maxNewTokens: number): Promise<{ sequence: number[]; mask: number[] }> {
  const generation = await policy.generate({ prompt, maxNewTokens, temperature: 1, seed: 11 });
  const sequence = [...prompt, ...generation.tokens];
  return { sequence, mask: sequence.map((_, t) => (t >= prompt.length ? 1 : 0)) };
}

function maxGap(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let gap = 0;
  for (let i = 0; i < a.length; i++) gap = Math.max(gap, Math.abs(a[i]! - b[i]!));
  return gap;
}

/** −(1/n) Σ mask·logπ: the gradient is −mask/n, independent of the current log-probs. */
function negativeLogLikelihood(mask: readonly number[]): TokenLoss {
  const count = mask.reduce((sum, m) => sum + m, 0);
  return {
    name: 'contract-nll',
    dependsOnCurrent: false,
    compute({ logprobs }) {
      const [current] = logprobs;
      let loss = 0;
      mask.forEach((m, t) => (loss -= (m * current![t]!) / count));
      return { loss, gradLogprobs: [Float32Array.from(mask, (m) => -m / count)], metrics: {} };
    },
  };
}
