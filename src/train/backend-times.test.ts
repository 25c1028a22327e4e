/**
 * The backend time split through runRl: a policy that keeps cumulative `times` per kind of call
 * gets each iteration's share in `IterationMetrics.backendMs`, recorded as `backendMs/<kind>`;
 * a policy without `times` gets none.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { at } from '../core/indexing.ts';
import type { TokenLoss } from '../core/loss.ts';
import type { GenerateRequest, Generation, OptimOptions, StepReport, TokenBatch } from '../policy/types.ts';
import { RunStore } from '../store/run-store.ts';
import { makeBanditEnv } from './bandit-test-fixture.ts';
import { backendTimeMetrics, timesBetween } from './backend-times.ts';
import { runRl, type RlConfigInput } from './rl.ts';
import { RunRecorder } from './run-recorder.ts';

/** A built-in policy that keeps a remote backend's `times`: sampling and fused-step milliseconds. */
class TimedBuiltinPolicy extends BuiltinPolicy {
  readonly times = { sample: 0, trainStep: 0 };
  override async generateBatch(requests: readonly GenerateRequest[]): Promise<Generation[]> {
    const started = performance.now();
    try {
      return await super.generateBatch(requests);
    } finally {
      this.times.sample += performance.now() - started;
    }
  }
  override async trainStep(batch: TokenBatch, loss: TokenLoss, options: OptimOptions): Promise<StepReport> {
    const started = performance.now();
    try {
      return await super.trainStep(batch, loss, options);
    } finally {
      this.times.trainStep += performance.now() - started;
    }
  }
}

const config: RlConfigInput = {
  algo: 'dr-grpo',
  iterations: 2,
  tasksPerIteration: 2,
  groupSize: 2,
  minibatchSize: 4,
  maxTurns: 1,
  maxNewTokens: 6,
  validateEvery: 0,
  seed: 1,
};
const tinyModel = () =>
  TransformerModel.create(
    { vocabSize: 300, hiddenSize: 16, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 32, maxSeqLen: 160 },
    { seed: 2 },
  );

test('timesBetween: per-kind milliseconds between two readings; backendTimeMetrics names them backendMs/<kind>', () => {
  assert.deepEqual(timesBetween({ sample: 5, optimStep: 1 }, { sample: 12, optimStep: 1.5, forward: 2 }), {
    sample: 7,
    optimStep: 0.5,
    forward: 2,
  });
  assert.deepEqual(backendTimeMetrics({ sample: 7 }), { 'backendMs/sample': 7 });
  assert.deepEqual(backendTimeMetrics(undefined), {});
});

test("runRl: each iteration's backendMs is the policy's time per kind of call within it, and the run recorder stores it", async () => {
  const policy = new TimedBuiltinPolicy({ model: await tinyModel() });
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-backend-times-'));
  const store = RunStore.open(join(dir, 'agentrl.db'));
  try {
    const run = store.createRun({ command: 'train', seed: 0, gitCommit: null, config: {} });
    const recorder = new RunRecorder({ store, runId: run.id });
    let previous = { sample: 0, trainStep: 0 };
    const { history } = await runRl({
      policy,
      env: makeBanditEnv,
      config,
      ...recorder.hooks(),
      onIteration: async (metrics, state) => {
        const spent = timesBetween(previous, policy.times);
        previous = { ...policy.times };
        const backendMs = metrics.backendMs!;
        if (metrics.validationSuccess === undefined)
          assert.deepEqual(backendMs, spent, `iteration ${metrics.iteration}: the policy's times within it`);
        else {
          // The last iteration validates after its clock stopped: validation's sampling is not the iteration's.
          assert.equal(backendMs.trainStep, spent.trainStep);
          assert.ok(
            backendMs.sample! < spent.sample!,
            `iteration ${metrics.iteration}: validation sampling is outside backendMs`,
          );
        }
        assert.ok(backendMs.sample! > 0 && backendMs.trainStep! > 0);
        assert.ok(backendMs.sample! + backendMs.trainStep! <= metrics.seconds * 1000);
        await recorder.commit(policy, metrics, state);
      },
    });
    assert.equal(history.length, 2);
    assert.equal(at(history, 0).validationSuccess, undefined);
    assert.notEqual(at(history, 1).validationSuccess, undefined);
    const stored = store.metrics(run.id).map((row) => row.values);
    history.forEach((metrics, i) => {
      assert.equal(at(stored, i)['backendMs/sample'], metrics.backendMs!.sample);
      assert.equal(at(stored, i)['backendMs/trainStep'], metrics.backendMs!.trainStep);
      assert.equal(at(stored, i).backendMs, undefined, 'no nested object among the metrics');
    });
  } finally {
    store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('runRl: a policy without times gets no backendMs', async () => {
  const { history } = await runRl({
    policy: new BuiltinPolicy({ model: await tinyModel() }),
    env: makeBanditEnv,
    config: { ...config, iterations: 1 },
  });
  assert.equal(at(history, 0).backendMs, undefined);
});

test("runRl: a KL reference that keeps times gets its iteration's share as backendMs['reference.<kind>']", async () => {
  const policy = new TimedBuiltinPolicy({ model: await tinyModel() });
  const frozen = new BuiltinPolicy({ model: await tinyModel() });
  const reference = {
    times: { forward: 0 },
    async logprobs(batch: TokenBatch) {
      const started = performance.now();
      try {
        return await frozen.logprobs(batch);
      } finally {
        this.times.forward += performance.now() - started;
      }
    },
  };
  let previous = 0;
  await runRl({
    policy,
    reference,
    env: makeBanditEnv,
    config: { ...config, algo: 'grpo', iterations: 1 },
    onIteration: (metrics) => {
      assert.equal(metrics.backendMs!['reference.forward'], reference.times.forward - previous);
      assert.ok(reference.times.forward > 0, 'the reference scored');
      previous = reference.times.forward;
    },
  });
});
