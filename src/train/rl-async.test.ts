import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentRlError } from '../core/errors.ts';
import type { Trajectory } from '../core/types.ts';
import type { Policy } from '../policy/types.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { decodeResumeState, encodeResumeState } from './resume-state.ts';
import { replaysSyncLoop } from './rl-async-sync-reference.ts';
import { rlConfigSchema, runRl, type IterationMetrics, type RlConfigInput, type RlResumeState } from './rl.ts';

test('async maxStaleness 0 is the synchronous loop bit for bit (metrics, final weights), and that loop is the recorded run', async () => {
  await replaysSyncLoop({ async: { maxStaleness: 0 } });
});

const config: RlConfigInput = {
  algo: 'grpo',
  iterations: 4,
  tasksPerIteration: 2,
  groupSize: 4,
  maxTurns: 1,
  maxNewTokens: 24,
  learningRate: 2e-3,
  minibatchSize: 8,
  klCoef: 0,
  validateEvery: 0,
  validationEpisodes: 2,
  seed: 11,
  async: { maxStaleness: 1 },
};

/** A sampler that delegates to `policy`, but holds one generation call until `release` resolves. */
function delayingSampler(policy: Policy, holdCall: number, release: Promise<unknown>): Policy {
  let calls = 0;
  return {
    tokenizer: policy.tokenizer,
    contextWindow: policy.contextWindow,
    chatFormat: policy.chatFormat,
    generate: (request) => policy.generate(request),
    generateBatch: async (requests, options) => {
      if (calls++ === holdCall) await release;
      return policy.generateBatch(requests, options);
    },
  };
}

test('async k = 1: every trajectory records its policy version, trained at most 1 version stale; async/* metrics', async () => {
  const { policy } = await warmStartedBandit({ sftSteps: 20, demonstrations: 16 });
  const seen: Trajectory[][] = [];
  const result = await runRl({
    policy,
    env: makeBanditEnv,
    config,
    onWarning: () => {},
    onTrajectories: (trajectories, iteration) => {
      seen[iteration] = [...trajectories];
    },
  });
  assert.equal(result.history.length, 4);
  for (const metrics of result.history) {
    const scalars = metrics.scalars ?? {};
    assert.ok(Number.isFinite(metrics.loss), `iteration ${metrics.iteration} loss ${metrics.loss}`);
    assert.ok((scalars['async/staleness/max'] ?? NaN) <= 1);
    assert.ok((scalars['async/queueDepthMax'] ?? NaN) <= 2 * 2, 'queue bound (k + 1)·T = 4 groups');
    for (const key of ['async/dropped', 'async/producerIdleSeconds', 'async/trainerIdleSeconds', 'async/queueDepth'])
      assert.ok(Number.isFinite(scalars[key]), key);
    for (const t of seen[metrics.iteration] ?? []) {
      assert.equal(typeof t.policyVersion, 'number');
      assert.ok(metrics.iteration - 1 - (t.policyVersion ?? 0) <= 1);
    }
  }
  assert.equal(result.history.at(-1)?.trained, 8);
});

test("async k = 1, separate sampler: a group held past 2 updates is dropped and counted; 'rescore' trains it as the current version", async () => {
  for (const staleTrajectories of ['drop', 'rescore'] as const) {
    const { policy } = await warmStartedBandit({ sftSteps: 20, demonstrations: 16 });
    let releaseHeld!: () => void;
    const held = new Promise<void>((resolve) => {
      releaseHeld = resolve;
    });
    const published: number[] = [];
    const result = await runRl({
      policy,
      // Generation call 0 (group 0's only turn) waits until the trainer has published version 2.
      sampler: delayingSampler(policy, 0, held),
      onWeightsUpdated: (version) => {
        published.push(version);
        if (version === 2) releaseHeld();
      },
      env: makeBanditEnv,
      config: { ...config, tasksPerIteration: 1, async: { maxStaleness: 1, staleTrajectories, groupsInFlight: 2 } },
      onWarning: () => {},
    });
    assert.deepEqual(published, [1, 2, 3, 4]);
    const counted = (key: string) => result.history.reduce((n, m) => n + (m.scalars?.[key] ?? 0), 0);
    assert.equal(counted('async/dropped'), staleTrajectories === 'drop' ? 4 : 0);
    assert.equal(counted('async/rescored'), staleTrajectories === 'rescore' ? 4 : 0);
    for (const m of result.history) assert.ok((m.scalars?.['async/staleness/max'] ?? NaN) <= 1);
  }
});

test('async: a producer error stops the run with that error (no hang); shouldStop stops both sides', async () => {
  const { policy } = await warmStartedBandit({ sftSteps: 10, demonstrations: 8 });
  class CollectFailed extends AgentRlError {}
  await assert.rejects(
    runRl({
      policy,
      env: makeBanditEnv,
      config,
      onWarning: () => {},
      collect: async () => {
        throw new CollectFailed('COLLECT_FAILED', 'scaffold crashed');
      },
    }),
    CollectFailed,
  );
  await assert.rejects(
    runRl({ policy, env: makeBanditEnv, config: { ...config, curriculumPool: 8 } }),
    /curriculumPool 8/,
    'the curriculum and the asynchronous producer are refused together',
  );
  let iterations = 0;
  const result = await runRl({
    policy,
    env: makeBanditEnv,
    config: { ...config, iterations: 10 },
    onWarning: () => {},
    shouldStop: () => ++iterations >= 2,
  });
  assert.equal(result.history.length, 2);
});

test('async resume: the policy version and the pending groups are restored; pending groups are generated again first', async () => {
  const { policy } = await warmStartedBandit({ sftSteps: 10, demonstrations: 8 });
  const states: { state: RlResumeState; bytes: Uint8Array }[] = [];
  const firstRun: IterationMetrics[] = [];
  await runRl({
    policy,
    env: makeBanditEnv,
    config: { ...config, iterations: 2 },
    onWarning: () => {},
    onIteration: async (metrics, state) => {
      firstRun.push(metrics);
      states.push({ state, bytes: await policy.saveState() });
    },
  });
  const last = states.at(-1);
  assert.ok(last !== undefined);
  assert.equal(last.state.async?.policyVersion, 2);
  assert.ok((last.state.async?.pendingGroups.length ?? 0) > 0, 'k = 1: groups were generated ahead');
  // Through the run store's envelope (resume-state.ts): the header JSON carries the async state.
  const decoded = decodeResumeState(encodeResumeState({ backend: 'builtin', policyState: last.bytes, rl: last.state }));
  assert.deepEqual(decoded.rl, last.state);
  const resumed = await BuiltinPolicy.fromState(decoded.policyState);
  const groups: string[] = [];
  const versions = new Set<number | undefined>();
  await runRl({
    policy: resumed,
    env: makeBanditEnv,
    config: { ...config, iterations: 3 },
    resume: decoded.rl,
    onWarning: () => {},
    onTrajectories: (trajectories) => {
      for (const t of trajectories) versions.add(t.policyVersion);
      groups.push(...new Set(trajectories.map((t) => t.groupId.split('#').at(-1) ?? '')));
    },
  });
  const pending = (last.state.async?.pendingGroups ?? []).map(String);
  assert.deepEqual(groups.slice(0, 2).sort(), pending.slice(0, 2).sort());
  assert.deepEqual([...versions], [2], 'regenerated by the restored weights (version 2)');
});

test('maxStaleness 0 with a sampler: the synchronous loop samples with it and hands it each update', async () => {
  const { policy } = await warmStartedBandit({ sftSteps: 10, demonstrations: 8 });
  let sampled = 0;
  const published: number[] = [];
  const sampler: Policy = {
    tokenizer: policy.tokenizer,
    contextWindow: policy.contextWindow,
    generate: (request) => policy.generate(request),
    generateBatch: (requests, options) => {
      sampled += requests.length;
      return policy.generateBatch(requests, options);
    },
  };
  await runRl({
    policy,
    sampler,
    onWeightsUpdated: (version) => {
      published.push(version);
    },
    env: makeBanditEnv,
    config: { ...config, iterations: 2, async: { maxStaleness: 0 } },
    onWarning: () => {},
  });
  assert.equal(sampled, 2 * 2 * 4, 'every episode of 2 iterations × 2 tasks × G 4 came from the sampler');
  assert.deepEqual(published, [1, 2]);
});

test('the async config: a number or JSON from the command line, an object in code; bad values name the field', () => {
  assert.deepEqual(rlConfigSchema.parse({}).async, { maxStaleness: 0, staleTrajectories: 'drop' });
  assert.equal(rlConfigSchema.parse({ async: '2' }).async.maxStaleness, 2);
  assert.equal(rlConfigSchema.parse({ async: 1 }).async.maxStaleness, 1);
  const parsed = rlConfigSchema.parse({ async: '{"maxStaleness":1,"staleTrajectories":"rescore"}' }).async;
  assert.equal(parsed.staleTrajectories, 'rescore');
  assert.throws(() => rlConfigSchema.parse({ async: { maxStaleness: -1 } }), /maxStaleness/);
  assert.throws(() => rlConfigSchema.parse({ async: { staleTrajectories: 'keep' } }), /drop|rescore/);
  assert.throws(() => rlConfigSchema.parse({ async: 'soon' }));
});

test('async: a trainer-side error stops the producer too — nothing is generating once runRl has rejected', async () => {
  const { policy } = await warmStartedBandit({ sftSteps: 10, demonstrations: 8 });
  class Crash extends AgentRlError {}
  let inFlight = 0;
  const sampler: Policy = {
    tokenizer: policy.tokenizer,
    contextWindow: policy.contextWindow,
    generate: (request) => policy.generate(request),
    generateBatch: async (requests, options) => {
      inFlight++;
      try {
        return await policy.generateBatch(requests, options);
      } finally {
        inFlight--;
      }
    },
  };
  await assert.rejects(
    runRl({
      policy,
      sampler,
      env: makeBanditEnv,
      config: { ...config, async: { maxStaleness: 2 } },
      onWarning: () => {},
      onTrajectories: (_trajectories, iteration) => {
        if (iteration === 2) throw new Crash('CRASH', 'the run store is gone');
      },
    }),
    Crash,
  );
  assert.equal(inFlight, 0);
});
