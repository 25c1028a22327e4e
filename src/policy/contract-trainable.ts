/**
 * The `TrainablePolicy` half of the policy contract (contract.ts runs it last, when
 * `trainable: true`): scoring reproduces sampling, an update moves the log-probs, `save` writes a
 * checkpoint, the loss sees the scored log-probs, capabilities are declared, `saveState` →
 * `loadState` round-trips, and a fused `trainStep` equals `forwardBackward` + `optimStep`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { at } from '../core/indexing.ts';
import type { TokenLoss } from '../core/loss.ts';
import type { ContractContext } from './contract.ts';
import { isTrainablePolicy, type Policy, type TrainablePolicy } from './types.ts';

export interface TrainableChecks {
  /** The temperature the checks sample, score and train at. Default 0.7; a backend that scores at temperature 1 only (Tinker) passes 1. */
  scoringTemperature?: number;
  /** `optimStep` reports a positive gradient norm. Default true; false also accepts NaN (the backend does not report it). */
  reportsGradNorm?: boolean;
  /** The files `save(path)` writes into the folder. Default a Hugging Face folder: config.json, model.safetensors, tokenizer.json. */
  checkpointFiles?: readonly string[];
}

type TrainableContext = ContractContext & Required<TrainableChecks> & { makeTrainable: () => Promise<TrainablePolicy> };

export function trainableContract(context: ContractContext, checks: TrainableChecks = {}): void {
  const {
    scoringTemperature = 0.7,
    reportsGradNorm = true,
    checkpointFiles = ['config.json', 'model.safetensors', 'tokenizer.json'],
  } = checks;
  const makeTrainable = async (): Promise<TrainablePolicy> => {
    const policy = await context.makePolicy();
    assert.ok(isTrainablePolicy(policy), 'the policy implements TrainablePolicy');
    return policy;
  };
  const trainable: TrainableContext = {
    ...context,
    scoringTemperature,
    reportsGradNorm,
    checkpointFiles,
    makeTrainable,
  };
  scoringAndUpdateContract(trainable);
  lossInputContract(trainable);
  stateContract(trainable);
}

/** `logprobs` reproduce the sampling log-probs; one likelihood step raises them; `save` writes the checkpoint's files. */
function scoringAndUpdateContract({
  makeTrainable,
  promptOf,
  maxNewTokens,
  scoringTemperature,
  reportsGradNorm,
  checkpointFiles,
}: TrainableContext): void {
  test('trainable: logprobs reproduce the sampling log-probs; forwardBackward + optimStep move them; save writes a checkpoint', async () => {
    const policy = await makeTrainable();
    const prompt = promptOf(policy, 'Say hi.');
    const temperature = scoringTemperature;
    const generation = await policy.generate({ prompt, maxNewTokens, temperature, seed: 9 });
    const sequence = [...prompt, ...generation.tokens];
    const scored = firstRow(await policy.logprobs({ sequences: [sequence], temperature }));
    assert.equal(scored.length, sequence.length);
    assert.equal(scored[0], 0);
    generation.logprobs.forEach((logprob, i) => {
      const t = prompt.length + i;
      assert.ok(Math.abs(at(scored, t) - logprob) < 1e-4, `token ${t}: scored ${scored[t]} vs sampled ${logprob}`);
    });

    const mask = sequence.map((_, t) => (t >= prompt.length ? 1 : 0));
    const before = firstRow(await policy.logprobs({ sequences: [sequence] }));
    const report = await policy.forwardBackward({ sequences: [sequence] }, negativeLogLikelihood(mask));
    assert.ok(Number.isFinite(report.loss));
    assert.equal(report.tokens, generation.tokens.length);
    const step = await policy.optimStep({ learningRate: 1e-2, maxGradNorm: 0 });
    if (reportsGradNorm) assert.ok(step.gradNorm > 0, `gradNorm ${step.gradNorm} is reported and positive`);
    else
      assert.ok(
        Number.isNaN(step.gradNorm) || step.gradNorm > 0,
        `gradNorm ${step.gradNorm} (NaN: the backend does not report it)`,
      );
    const after = firstRow(await policy.logprobs({ sequences: [sequence] }));
    let gained = 0;
    for (let t = prompt.length; t < sequence.length; t++) gained += at(after, t) - at(before, t);
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
}

/** The loss of `forwardBackward` at a temperature reads the log-probs `logprobs` gives at it; capabilities are declared. */
function lossInputContract({ makeTrainable, promptOf, maxNewTokens, scoringTemperature }: TrainableContext): void {
  test('trainable: forwardBackward at a temperature trains on the log-probs logprobs gives at it; capabilities are declared', async () => {
    const policy = await makeTrainable();
    assert.equal(typeof policy.backend, 'string');
    for (const key of ['valueHead', 'entropy', 'gradientClipping'] as const)
      assert.equal(typeof policy.capabilities[key], 'boolean', `capabilities.${key}`);
    if (policy.capabilities.valueHead)
      assert.equal(typeof policy.values, 'function', 'a value head comes with values()');
    assert.ok(
      policy.samplerMatchesTrainer === undefined || typeof policy.samplerMatchesTrainer === 'boolean',
      'samplerMatchesTrainer is absent or a boolean',
    );
    const { sequence, mask } = await sampledSequence(policy, promptOf(policy, 'Count to three.'), maxNewTokens);
    const temperature = scoringTemperature;
    const scored = firstRow(await policy.logprobs({ sequences: [sequence], temperature }));
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
    const trainedOn = seen;
    for (let t = 1; t < sequence.length; t++)
      assert.ok(
        Math.abs(at(trainedOn, t) - at(scored, t)) < 1e-4,
        `token ${t}: trained on ${trainedOn[t]} vs scored ${scored[t]}`,
      );
    await policy.optimStep({ learningRate: 1e-3, maxGradNorm: 0 });
  });
}

/** `saveState` → `loadState` restores the log-probs, the step counter and the next update; a fused `trainStep` gives the same update. */
function stateContract({ makeTrainable, promptOf, maxNewTokens }: TrainableContext): void {
  test('trainable: saveState → loadState restores the log-probs and the next update; a fused trainStep equals forwardBackward + optimStep', async () => {
    const policy = await makeTrainable();
    const { sequence, mask } = await sampledSequence(policy, promptOf(policy, 'Say hi.'), maxNewTokens);
    const sequences = [sequence];
    const scoredNow = async () => firstRow(await policy.logprobs({ sequences }));
    const step = { learningRate: 1e-2, maxGradNorm: 0 };
    // One step first, so the state holds optimizer moments and a step counter.
    await policy.forwardBackward({ sequences }, negativeLogLikelihood(mask));
    await policy.optimStep(step);
    const saved = await policy.saveState();
    const atSave = await scoredNow();
    await policy.forwardBackward({ sequences }, negativeLogLikelihood(mask));
    const firstReport = await policy.optimStep(step);
    const afterNext = await scoredNow();
    assert.ok(maxGap(afterNext, atSave) > 0, 'the second step moved the log-probs');

    await policy.loadState(saved);
    assert.equal(maxGap(await scoredNow(), atSave), 0, 'the restored policy scores as the saved one did');
    await policy.forwardBackward({ sequences }, negativeLogLikelihood(mask));
    const againReport = await policy.optimStep(step);
    assert.equal(againReport.step, firstReport.step, 'the step counter was restored');
    assert.equal(maxGap(await scoredNow(), afterNext), 0, 'the restored policy takes the same next update');

    if (policy.trainStep !== undefined) {
      await policy.loadState(saved);
      const fused = await policy.trainStep({ sequences }, negativeLogLikelihood(mask), step);
      assert.equal(fused.step, firstReport.step);
      assert.ok(
        Math.abs(fused.gradNorm - firstReport.gradNorm) <= 1e-4 * Math.max(1, firstReport.gradNorm),
        `gradNorm fused ${fused.gradNorm} vs ${firstReport.gradNorm}`,
      );
      const gap = maxGap(await scoredNow(), afterNext);
      assert.ok(gap < 1e-4, `fused trainStep vs forwardBackward + optimStep: log-probs differ by ${gap}`);
    }
  });
}

/** The log-probs of the one sequence a check scored. */
function firstRow(rows: readonly Float32Array[]): Float32Array {
  return at(rows, 0, 'scored sequences');
}

async function sampledSequence(
  policy: Policy,
  prompt: number[],
  maxNewTokens: number,
): Promise<{ sequence: number[]; mask: number[] }> {
  const generation = await policy.generate({ prompt, maxNewTokens, temperature: 1, seed: 11 });
  const sequence = [...prompt, ...generation.tokens];
  return { sequence, mask: sequence.map((_, t) => (t >= prompt.length ? 1 : 0)) };
}

function maxGap(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let gap = 0;
  for (let i = 0; i < a.length; i++) gap = Math.max(gap, Math.abs(at(a, i) - at(b, i)));
  return gap;
}

/** −(1/n) Σ mask·logπ: the gradient is −mask/n, independent of the current log-probs. */
function negativeLogLikelihood(mask: readonly number[]): TokenLoss {
  const count = mask.reduce((sum, m) => sum + m, 0);
  return {
    name: 'contract-nll',
    dependsOnCurrent: false,
    compute({ logprobs }) {
      const current = at(logprobs, 0, 'current log-probs');
      let loss = 0;
      mask.forEach((m, t) => {
        loss -= (m * at(current, t)) / count;
      });
      return { loss, gradLogprobs: [Float32Array.from(mask, (m) => -m / count)], metrics: {} };
    },
  };
}
