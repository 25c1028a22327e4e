/**
 * The off-policy correction inside a real update (a tiny built-in model): a constructed stale
 * batch — behaviour log-probs = the trainer's own minus the PyTorch reference's log ratios — is
 * trained with exactly the reference weights and masks; 'off' and 'auto' on the built-in engine
 * are the synchronous loop bit for bit (and it the recorded run, within a tolerance); 'auto' with another engine corrects.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import type { Trajectory } from '../core/types.ts';
import type { TokenLoss } from '../core/loss.ts';
import { offPolicyReference as reference } from '../algorithms/fixtures/off-policy-reference.ts';
import { assertClose } from '../algorithms/gradient-check.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { effectivePreset, rlConfigSchema, runRl } from './rl.ts';
import { replaysSyncLoop } from './rl-async-sync-reference.ts';
import { updatePolicy, type TrainingSample } from './rl-update.ts';

const { inputs } = reference;

async function tinyPolicy(): Promise<BuiltinPolicy> {
  const model = await TransformerModel.create(
    { vocabSize: 272, hiddenSize: 16, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 32, maxSeqLen: 16 },
    { seed: 3 },
  );
  return new BuiltinPolicy({ model });
}

/** The reference's sequences as one group of trajectories, sampled at version 0 with δ = the reference log ratios. */
function staleBatch(scored: readonly Float32Array[], tokens: number[][]): Trajectory[] {
  const rewards = [1, 0, 0.5, 0.2, 0.9];
  return inputs.lossMask.map((mask, i) => {
    const delta = (t: number) => at(at(inputs.trainerLogprobs, i), t) - at(at(inputs.behaviourLogprobs, i), t);
    const start = mask.indexOf(1);
    const end = mask.length;
    const tokenRewards = mask.map((_, t) => (t === end - 1 ? at(rewards, i) : 0));
    return {
      tokens: at(tokens, i),
      lossMask: mask,
      logprobs: Array.from(at(scored, i), (logprob, t) => (at(mask, t) === 1 ? logprob - delta(t) : logprob)),
      tokenRewards,
      turns: [{ start, end, reward: at(rewards, i), action: '', observation: '', invalidAction: false }],
      totalReward: at(rewards, i),
      success: false,
      groupId: 'g0',
      seed: 0,
      truncated: false,
      policyVersion: 0,
    };
  });
}

/** A wrapper that records the loss of each optimizer step and the batch it was given. */
function recording(inner: BuiltinPolicy, samplerMatchesTrainer?: boolean) {
  const steps: { sequences: readonly (readonly number[])[]; loss: TokenLoss }[] = [];
  const policy: TrainablePolicy = {
    backend: 'recording',
    capabilities: inner.capabilities,
    ...(samplerMatchesTrainer === undefined ? {} : { samplerMatchesTrainer }),
    tokenizer: inner.tokenizer,
    contextWindow: inner.contextWindow,
    generate: (request) => inner.generate(request),
    generateBatch: (requests) => inner.generateBatch(requests),
    logprobs: (batch) => inner.logprobs(batch),
    forwardBackward: (batch, loss) => {
      steps.push({ sequences: batch.sequences, loss });
      return inner.forwardBackward(batch, loss);
    },
    optimStep: (options) => inner.optimStep(options),
    save: (path, options) => inner.save(path, options),
    saveState: () => inner.saveState(),
    loadState: (state) => inner.loadState(state),
  };
  return { policy, steps };
}

describe('the correction inside updatePolicy, against the PyTorch reference', () => {
  for (const [name, expected] of Object.entries(reference.corrections)) {
    test(`${name}: a stale batch trains with the reference weights and masks, and reports its metrics`, async () => {
      const inner = await tinyPolicy();
      const rng = new Rng(11);
      const tokens = inputs.lossMask.map((mask) => mask.map(() => 1 + Math.floor(rng.next() * 60)));
      const temperature = 1;
      const scored = await inner.logprobs({ sequences: tokens, temperature });
      const trajectories = staleBatch(scored, tokens);
      const config = rlConfigSchema.parse({
        algo: 'grpo',
        klCoef: 0,
        temperature,
        minibatchSize: 8,
        offPolicyCorrection: { mode: expected.method, ...expected.options },
      });
      const { policy, steps } = recording(inner);
      let samples: TrainingSample[] = [];
      const report = await updatePolicy({
        policy,
        reference: undefined,
        trajectories,
        preset: effectivePreset(config),
        config,
        iteration: 1,
        learningRate: 1e-3,
        rng: new Rng(1),
        onSamples: (s) => {
          samples = s;
        },
      });
      const step = at(steps, 0, 'one optimizer step');
      assert.equal(steps.length, 1);
      // At the trainer's own log-probs the PPO ratio is 1 (never clipped): dL/dlogp = −A·w·m′/Σm′.
      const order = step.sequences.map((sequence) => tokens.findIndex((row) => row === sequence));
      const output = step.loss.compute({ logprobs: order.map((i) => at(scored, i)) });
      const kept = expected.lossMask.flat().reduce((a, b) => a + b, 0);
      for (const [k, i] of order.entries()) {
        const advantages = at(samples, i).advantages;
        for (let t = 0; t < at(tokens, i).length; t++) {
          const weight = at(at(expected.weights, i), t) * at(at(expected.lossMask, i), t);
          const want = (-at(advantages, t) * weight) / kept;
          const got = at(at(output.gradLogprobs, k), t);
          assert.ok(
            Math.abs(got - want) <= 1e-6 * Math.max(1e-3, Math.abs(want)),
            `${name} [${i}][${t}]: ${got} vs ${want}`,
          );
        }
      }
      const scalars = report.scalars ?? {};
      assertClose(scalars['offPolicy/absLogprobDelta/max'] ?? NaN, expected.metrics.maxAbsLogprobDelta, 1e-6);
      assertClose(scalars['offPolicy/absLogprobDelta/mean'] ?? NaN, expected.metrics.meanAbsLogprobDelta, 1e-6);
      assertClose(scalars['offPolicy/truncated'] ?? NaN, expected.metrics.truncatedFraction, 1e-12);
      assertClose(scalars['offPolicy/masked'] ?? NaN, expected.metrics.maskedFraction, 1e-12);
      assertClose(scalars['offPolicy/weight/mean'] ?? NaN, expected.metrics.weightMean, 1e-6);
    });
  }
});

describe("'auto' in updatePolicy", () => {
  test("'auto' corrects the same batch (stale by one version at iteration 2) with TIS, and not at iteration 1", async () => {
    const inner = await tinyPolicy();
    const tokens = inputs.lossMask.map((mask, i) => mask.map((_, t) => 1 + ((i * 7 + t * 3) % 60)));
    const scored = await inner.logprobs({ sequences: tokens, temperature: 1 });
    const config = rlConfigSchema.parse({ algo: 'grpo', klCoef: 0, temperature: 1, minibatchSize: 8 });
    const run = (iteration: number) =>
      updatePolicy({
        policy: inner,
        reference: undefined,
        trajectories: staleBatch(scored, tokens),
        preset: effectivePreset(config),
        config,
        iteration,
        learningRate: 1e-3,
        rng: new Rng(1),
      });
    assert.equal((await run(1)).scalars, undefined, 'version 0 trained at version 0: on-policy');
    const stale = await run(2);
    assertClose(
      stale.scalars?.['offPolicy/truncated'] ?? NaN,
      reference.corrections.tis?.metrics.truncatedFraction ?? NaN,
    );
  });
});

describe('runRl: when the correction is off it changes nothing', () => {
  test("'off' and 'auto' (the built-in engine samples what it trains) are the synchronous loop bit for bit, and that loop is the recorded run", async () => {
    await replaysSyncLoop({ offPolicyCorrection: { mode: 'off' } });
  });

  test("'auto' with a sampler that is another engine corrects: offPolicy/* metrics, weights ≈ 1 for the built-in engine", async () => {
    const { policy: inner, referencePolicy } = await warmStartedBandit({ sftSteps: 10, demonstrations: 16 });
    const { policy } = recording(inner, false);
    const result = await runRl({
      policy,
      reference: referencePolicy,
      env: makeBanditEnv,
      config: {
        iterations: 1,
        tasksPerIteration: 2,
        groupSize: 4,
        maxTurns: 1,
        maxNewTokens: 24,
        validateEvery: 0,
        seed: 3,
      },
      onWarning: () => {},
    });
    const scalars = at(result.history, 0).scalars ?? {};
    assert.ok((scalars['offPolicy/absLogprobDelta/max'] ?? NaN) < 1e-3, JSON.stringify(scalars));
    assert.equal(scalars['offPolicy/masked'], 0);
    assertClose(scalars['offPolicy/weight/mean'] ?? NaN, 1, 1e-3);
  });
});

test("algo 'cispo' trains: finite loss, a real gradient, every weight tensor it touches moved", async () => {
  const { model, policy } = await warmStartedBandit({ sftSteps: 40, demonstrations: 32 });
  const before = await model.hostParams();
  const result = await runRl({
    policy,
    env: makeBanditEnv,
    config: {
      algo: 'cispo',
      iterations: 2,
      tasksPerIteration: 4,
      groupSize: 4,
      maxTurns: 1,
      maxNewTokens: 24,
      learningRate: 2e-3,
      validateEvery: 0,
      seed: 5,
    },
    onWarning: () => {},
  });
  for (const m of result.history) assert.ok(Number.isFinite(m.loss), JSON.stringify(m));
  assert.ok(
    result.history.some((m) => m.gradNorm > 0),
    'a group with varying rewards gave a gradient',
  );
  const after = await model.hostParams();
  let moved = 0;
  for (const [name, tensor] of before) {
    const now = after.get(name)?.data;
    if (now === undefined || tensor.data.some((x, i) => x !== now[i])) moved++;
  }
  assert.ok(moved > before.size / 2, `${moved} of ${before.size} tensors moved`);
});
