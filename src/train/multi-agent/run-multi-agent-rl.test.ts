import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Trajectory } from '../../core/types.ts';
import { negotiationRoles } from '../../envs/negotiation/roles.ts';
import type { TransformerModel } from '../../engine/transformer-model.ts';
import { runMultiAgentRl } from './run-multi-agent-rl.ts';
import { fixedTaskNegotiation, loraRoleModels, ScriptedBuiltinPolicy } from './role-test-fixture.ts';
import type { RlConfigInput } from '../rl.ts';
import type { MonitorReport, RewardMonitor } from '../../rewards/monitor/index.ts';

const config: RlConfigInput = {
  algo: 'grpo',
  klCoef: 0,
  iterations: 1,
  tasksPerIteration: 1,
  groupSize: 3,
  maxTurns: 2,
  maxNewTokens: 32,
  minibatchSize: 3,
  learningRate: 1e-2,
  validateEvery: 0,
  validationEpisodes: 2,
  systemPrompt: false,
  historyTurns: 'all',
  seed: 1,
};
/** Alice's three proposals in each group of 3, Bob accepting: Alice 0.8, 1.0, 0; Bob 0.6, 0, 1.0. */
const proposals = ['<answer>take 1 0 2</answer>', '<answer>take 1 2 3</answer>', '<answer>take 0 0 0</answer>'];
const accept = ['<answer>accept</answer>'];
/**
 * GRPO within each role's group: A = (r − mean) / (unbiased std + 1e-6).
 * Alice: mean 0.6, std √(0.56/2) = 0.52915 → 0.2/0.52915, 0.4/0.52915, −0.6/0.52915.
 * Bob: mean 0.53333, std √(0.50667/2) = 0.50332 → 0.06667/0.50332, −0.53333/0.50332, 0.46667/0.50332.
 * (One group of all six would give Alice 0.8 → 0.49 instead: the roles' baselines would mix.)
 */
const expected = { alice: [0.37796, 0.75593, -1.13389], bob: [0.13245, -1.05962, 0.92717] };

/** Each trajectory's advantage (on its first policy token), by role, as the updates saw them. */
function advantageRecorder() {
  const seen: Record<string, number[]> = {};
  const onAdvantages = (trajectories: readonly Trajectory[], advantages: readonly Float64Array[]) => {
    trajectories.forEach((t, i) => {
      const first = t.lossMask.indexOf(1);
      const role = t.role ?? '?';
      seen[role] = [...(seen[role] ?? []), Number((advantages[i]?.[first] ?? NaN).toFixed(5))];
    });
  };
  return { seen, onAdvantages };
}

async function adapters(model: TransformerModel): Promise<Float32Array[]> {
  return [...(await model.adapterParams()).values()].map((tensor) => tensor.data.slice());
}

const same = (a: Float32Array[], b: Float32Array[]) => a.every((x, i) => x.every((v, j) => v === b[i]?.[j]));

test('per-role advantages (hand-computed), each role its own optimizer state over one frozen base', async () => {
  const [aliceModel, bobModel] = await loraRoleModels([1, 2]);
  if (aliceModel === undefined || bobModel === undefined) throw new TypeError('two models');
  const base = [...(await aliceModel.baseParams()).values()].map((t) => t.data.slice());
  const startAlice = await adapters(aliceModel);
  const startBob = await adapters(bobModel);
  const { seen, onAdvantages } = advantageRecorder();
  const result = await runMultiAgentRl({
    env: fixedTaskNegotiation,
    roles: negotiationRoles(),
    players: {
      alice: { policy: new ScriptedBuiltinPolicy(aliceModel, proposals) },
      bob: { policy: new ScriptedBuiltinPolicy(bobModel, accept) },
    },
    config,
    onAdvantages,
  });
  assert.deepEqual(seen, expected);
  assert.deepEqual(result.trainers, ['alice', 'bob']);
  const scalars = result.history[0]?.scalars ?? {};
  assert.equal(scalars['role/alice/reward'], 0.6);
  assert.ok(Math.abs((scalars['role/bob/reward'] ?? 0) - 1.6 / 3) < 1e-12);
  assert.ok(Number.isFinite(scalars['role/alice/loss']) && Number.isFinite(scalars['role/bob/loss']));
  // Separate optimizer state: one step each, moments of their own.
  const [aliceOptim, bobOptim] = [await aliceModel.optimizerState(), await bobModel.optimizerState()];
  assert.equal(aliceOptim.step, 1);
  assert.equal(bobOptim.step, 1);
  const aliceM = [...aliceOptim.m.values()].map((t) => t.data);
  const bobM = [...bobOptim.m.values()].map((t) => t.data);
  assert.ok(
    aliceM.every((data, i) => data !== bobM[i]),
    'no moment array is shared',
  );
  assert.ok(!same(aliceM, bobM), "Alice's moments are not Bob's");
  assert.ok(
    !same(startAlice, await adapters(aliceModel)) && !same(startBob, await adapters(bobModel)),
    'both adapters moved',
  );
  for (const model of [aliceModel, bobModel])
    assert.ok(
      same(
        base,
        [...(await model.baseParams()).values()].map((t) => t.data),
      ),
      'the shared base stays frozen',
    );
});

test('a frozen role is never trained; a shared policy is one trainer with the same per-role advantages', async () => {
  const [aliceModel, bobModel, sharedModel] = await loraRoleModels([1, 2, 3]);
  if (aliceModel === undefined || bobModel === undefined || sharedModel === undefined) throw new TypeError('models');
  const startBob = await adapters(bobModel);
  const frozen = await runMultiAgentRl({
    env: fixedTaskNegotiation,
    roles: negotiationRoles(),
    players: {
      alice: { policy: new ScriptedBuiltinPolicy(aliceModel, proposals) },
      bob: { frozen: new ScriptedBuiltinPolicy(bobModel, accept) },
    },
    config,
  });
  assert.deepEqual(frozen.trainers, ['alice']);
  assert.equal((await bobModel.optimizerState()).step, 0);
  assert.ok(same(startBob, await adapters(bobModel)));
  assert.equal(frozen.history[0]?.scalars?.['role/bob/trained'], undefined);

  // One policy plays both roles (Bob counter-proposes): still one trajectory per role, grouped within the role.
  const shared = new ScriptedBuiltinPolicy(sharedModel, proposals);
  const { seen, onAdvantages } = advantageRecorder();
  const result = await runMultiAgentRl({
    env: fixedTaskNegotiation,
    roles: negotiationRoles(),
    players: { alice: { policy: shared }, bob: { policy: shared } },
    config: { ...config, maxTurns: 4 },
    onAdvantages,
  });
  assert.deepEqual(result.trainers, ['alice+bob']);
  assert.equal(seen.alice?.length, 3);
  assert.equal(seen.bob?.length, 3);
  assert.equal(
    (await sharedModel.optimizerState()).step,
    2,
    'six trajectories in minibatches of 3: two steps of ONE optimizer',
  );
});

test('reward components and the reward-hacking monitor per role: role/<name>/reward/<c>, role/<name>/monitor/<signal>', async () => {
  const [aliceModel, bobModel] = await loraRoleModels([1, 2]);
  if (aliceModel === undefined || bobModel === undefined) throw new TypeError('two models');
  const seen: Record<string, { roles: string[]; prompts: number; entropy: number | undefined }> = {};
  const spy = (role: string): RewardMonitor => ({
    mode: 'stop',
    observe(input) {
      seen[role] = {
        roles: [...new Set(input.episodes.map((e) => (e as Trajectory).role ?? '?'))],
        prompts: input.episodes.filter((e) => e.prompt?.includes('Your values') === true).length,
        entropy: input.entropy,
      };
      const fired = role === 'bob' ? [{ signal: 'length-drift' as const, message: 'bob drifted' }] : [];
      return {
        iteration: input.iteration,
        metrics: { 'monitor/length-drift': role === 'bob' ? 1 : 0 },
        fired,
        readings: {} as MonitorReport['readings'],
        stop: fired.length > 0,
      };
    },
  });
  const warnings: string[] = [];
  const result = await runMultiAgentRl({
    env: fixedTaskNegotiation,
    roles: negotiationRoles(),
    players: {
      alice: { policy: new ScriptedBuiltinPolicy(aliceModel, proposals) },
      bob: { policy: new ScriptedBuiltinPolicy(bobModel, accept) },
    },
    config: { ...config, iterations: 3 },
    monitor: spy,
    onWarning: (warning) => warnings.push(warning.message),
  });
  assert.equal(result.history.length, 1, "bob's monitor (mode stop) ended the run after iteration 1");
  assert.match(result.stopReason ?? '', /saw bob: length-drift in iteration 1/);
  assert.deepEqual(warnings, ['iteration 1: reward hacking? role bob: length-drift: bob drifted']);
  assert.deepEqual(
    Object.fromEntries(
      Object.entries(seen).map(([role, s]) => [role, [s.roles, s.prompts, Number.isFinite(s.entropy)]]),
    ),
    { alice: [['alice'], 3, true], bob: [['bob'], 3, true] },
    "each monitor reads only its role's episodes, with their prompts and its trainer's entropy",
  );
  const scalars = result.history[0]?.scalars ?? {};
  assert.equal(scalars['role/alice/monitor/length-drift'], 0);
  assert.equal(scalars['role/bob/monitor/length-drift'], 1);
  // Deal components: Alice's deals are worth (0.8 + 0.6) / 2, (1.0 + 0) / 2, (0 + 1.0) / 2 jointly; paid to both roles.
  const deal = (0.7 + 0.5 + 0.5) / 3;
  for (const role of ['alice', 'bob']) {
    assert.ok(Math.abs((scalars[`role/${role}/reward/deal`] ?? NaN) - deal) < 1e-12, `role/${role}/reward/deal`);
    assert.equal(scalars[`role/${role}/reward/invalid_action`], 0);
    assert.equal(scalars[`role/${role}/rewardFailures`], 0);
  }
  assert.ok(Math.abs((scalars['reward/deal'] ?? NaN) - deal) < 1e-12, 'reward/deal over all roles');
});
