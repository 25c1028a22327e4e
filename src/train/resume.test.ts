import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../store/run-store.ts';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { runRl, type RlConfigInput } from './rl.ts';
import { loadResumePoint, RunRecorder } from './run-recorder.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { captureBuiltinState, parseBuiltinState, type BuiltinState } from '../policy/builtin-state.ts';
import { at } from '../core/indexing.ts';

const config: RlConfigInput = {
  algo: 'grpo',
  iterations: 4,
  tasksPerIteration: 4,
  groupSize: 4,
  maxTurns: 1,
  maxNewTokens: 24,
  learningRate: 2e-3,
  minibatchSize: 4,
  klCoef: 0.05,
  // Low enough that every update is clipped: the global-norm sum order then matters bit for bit.
  maxGradNorm: 0.05,
  validateEvery: 2,
  validationEpisodes: 4,
  seed: 5,
};
/** 16 trajectories per iteration in minibatches of 4: optimizer steps per iteration. */
const stepsPerIteration = 4;
/** Wall-clock measurements, the only metrics allowed to differ between the two runs. */
const timing = ['seconds', 'rolloutTokensPerSecond', 'trainTokensPerSecond'];

class Crash extends Error {}

/** What a run restores its policies with: each `BuiltinPolicy` from its state (a LoRA state onto its base). */
interface Restore {
  policy: (state: Uint8Array) => Promise<BuiltinPolicy>;
  reference: (state: Uint8Array) => Promise<BuiltinPolicy>;
}

/** One resume scenario: the RL config and how its states restore. */
interface Setup {
  config: RlConfigInput;
  restore: Restore;
}

/** The start states are `saveState` bytes; each run restores its policy and reference from them. */
async function train(
  store: RunStore,
  { config, restore }: Setup,
  start: { model: Uint8Array; reference: Uint8Array },
  crashInIteration?: number,
): Promise<number> {
  const run = store.createRun({ command: 'train', seed: 5, gitCommit: null, config: { ...config } });
  const policy = await restore.policy(start.model);
  const reference = await restore.reference(start.reference);
  const recorder = new RunRecorder({ store, runId: run.id, validationEpisodes: 4 });
  await recorder.recordStart(reference);
  const hooks = recorder.hooks();
  await runRl({
    policy,
    reference,
    env: makeBanditEnv,
    config,
    ...hooks,
    onTrajectories: async (trajectories, iteration) => {
      await hooks.onTrajectories!(trajectories, iteration);
      // A crash after the rollout, before the update: the iteration in progress is lost.
      if (iteration === crashInIteration) throw new Crash(`crash in iteration ${iteration}`);
    },
    onIteration: async (metrics, state) => {
      await recorder.commit(policy, metrics, state);
    },
  });
  return run.id;
}

/** How a resume point's states become policies: each restores its own `BuiltinPolicy`. */
const restore: Restore = {
  policy: (state: Uint8Array) => BuiltinPolicy.fromState(state),
  reference: (state: Uint8Array) => BuiltinPolicy.fromState(state),
};

/** Resumes the interrupted run (2 iterations done) and runs iterations 3 and 4, recording them in its run. */
async function resumeToTheEnd(
  store: RunStore,
  { config, restore }: Setup,
  interrupted: number,
  warmStartSteps: number,
): Promise<void> {
  const point = (await loadResumePoint(store, interrupted, restore))!;
  assert.equal(point.resume!.iteration, 2);
  assert.equal(
    point.policy.model.step,
    warmStartSteps + 2 * stepsPerIteration,
    'optimizer step counter restored (warm-start steps + 2 iterations of steps)',
  );
  const recorder = new RunRecorder({ store, runId: interrupted, validationEpisodes: 4 });
  const result = await runRl({
    policy: point.policy,
    reference: point.reference,
    env: makeBanditEnv,
    config,
    resume: point.resume,
    ...recorder.hooks(),
    onIteration: async (metrics, state) => {
      await recorder.commit(point.policy, metrics, state);
    },
  });
  assert.deepEqual(
    result.history.map((m) => m.iteration),
    [3, 4],
  );
}

/** Final weights (under LoRA: adapters and value head) and optimizer state of the two runs are bit-identical. */
async function assertSameFinalState(
  store: RunStore,
  { restore }: Setup,
  straight: number,
  interrupted: number,
  warmStartSteps: number,
): Promise<BuiltinState> {
  const a = (await loadResumePoint(store, straight, restore))!;
  const b = (await loadResumePoint(store, interrupted, restore))!;
  const stateA = await captureBuiltinState(a.policy.model);
  const stateB = await captureBuiltinState(b.policy.model);
  assert.equal(stateA.optimizer!.step, warmStartSteps + 4 * stepsPerIteration);
  const trained = (state: typeof stateA) =>
    new Map([...state.params, ...(state.lora?.adapters ?? []), ...(state.lora?.valueHead ?? [])]);
  const [trainedA, trainedB] = [trained(stateA), trained(stateB)];
  assert.ok(trainedA.size > 0 && trainedA.size === trainedB.size, 'the same trained arrays');
  for (const [name, tensor] of trainedA)
    assert.deepEqual(trainedB.get(name)!.data, tensor.data, `trained array ${name}`);
  for (const moments of ['m', 'v'] as const)
    for (const [name, tensor] of stateA.optimizer![moments])
      assert.deepEqual(stateB.optimizer![moments].get(name)!.data, tensor.data, `adam ${moments} ${name}`);
  return stateA;
}

function withoutTiming(values: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(values).filter(([key]) => !timing.includes(key)));
}

/**
 * Runs the scenario: an uninterrupted run, a run crashing in iteration 3, its resume to 4; the two
 * agree step for step (metrics, trajectories) and end in bit-identical trained arrays and moments.
 */
async function crashAndResume(
  setup: Setup,
  start: { model: Uint8Array; reference: Uint8Array },
): Promise<BuiltinState> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-resume-'));
  try {
    const warmStartSteps = parseBuiltinState(start.model).optimizer?.step ?? 0;
    const store = RunStore.open(join(dir, 'agentrl.db'));

    const straight = await train(store, setup, start);
    await assert.rejects(train(store, setup, start, 3), Crash);
    const interrupted = at(store.runs(), 0).id;
    assert.deepEqual(
      store.metrics(interrupted).map((m) => m.step),
      [1, 2],
      'the crashed iteration left nothing',
    );

    await resumeToTheEnd(store, setup, interrupted, warmStartSteps);

    const expected = store.metrics(straight);
    const actual = store.metrics(interrupted);
    assert.deepEqual(
      actual.map((m) => m.step),
      [1, 2, 3, 4],
    );
    for (let i = 0; i < 4; i++)
      assert.deepEqual(withoutTiming(at(actual, i).values), withoutTiming(at(expected, i).values), `step ${i + 1}`);
    assert.ok(at(expected, 3).values.validationSuccess !== undefined && Number.isFinite(at(expected, 3).values.loss));
    // Clipping was active in every iteration: the pre-clip global norm exceeds the threshold.
    const { maxGradNorm } = setup.config;
    for (const m of expected)
      assert.ok(m.values.gradNorm! > maxGradNorm!, `step ${m.step}: gradNorm ${m.values.gradNorm} ≤ ${maxGradNorm}`);
    // The steps compared are real updates: rewards vary within groups, so advantages are not all zero.
    assert.ok(store.trajectory(straight, 3, 0)!.advantages !== null);
    assert.ok(
      [...store.iterateTrajectories(straight)].some((t) => t.advantages!.some((a) => a !== 0)),
      'some advantage is non-zero',
    );
    for (const step of [3, 4]) {
      for (let index = 0; index < 16; index++) {
        assert.deepEqual(
          store.trajectory(interrupted, step, index),
          store.trajectory(straight, step, index),
          `trajectory ${step}/${index}`,
        );
      }
    }
    const final = await assertSameFinalState(store, setup, straight, interrupted, warmStartSteps);
    store.close();
    return final;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('resume: 2 iterations, a crash in the 3rd, resume to 4 matches an uninterrupted run step for step, with gradient clipping active', async () => {
  const fixture = await warmStartedBandit({ sftSteps: 40, demonstrations: 32 });
  const start = { model: await fixture.policy.saveState(), reference: await fixture.referencePolicy.saveState() };
  await crashAndResume({ config, restore }, start);
});

test('resume of a LoRA PPO run: adapters, the value head and their AdamW moments restore, and it continues step for step', async () => {
  const fixture = await warmStartedBandit({ valueHead: true, sftSteps: 40, demonstrations: 32 });
  const baseParams = await fixture.model.hostParams();
  const model = await TransformerModel.fromParams(fixture.model.config, baseParams, { seed: 9, lora: { rank: 4 } });
  const policy = new BuiltinPolicy({ model });
  const start = { model: await policy.saveState(), reference: await fixture.referencePolicy.saveState() };
  const loraRestore: Restore = {
    policy: (state) => BuiltinPolicy.fromState(state, { baseParams }),
    reference: (state) => BuiltinPolicy.fromState(state),
  };
  const final = await crashAndResume({ config: { ...config, algo: 'ppo' }, restore: loraRestore }, start);
  // What was compared includes a value head that trained (PPO's value loss under LoRA) and its moments.
  const head = final.lora?.valueHead?.get('valueHead.w');
  assert.ok(head !== undefined, 'the LoRA state holds the value head');
  assert.notDeepEqual(head.data, baseParams.get('valueHead.w')?.data, 'the value head moved from the base');
  assert.ok(
    final.optimizer?.m.get('valueHead.w')?.data.some((x) => x !== 0),
    'the value head has AdamW moments',
  );
});
