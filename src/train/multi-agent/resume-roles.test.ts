import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CheckpointError } from '../../core/errors.ts';
import { negotiationRoles } from '../../envs/negotiation/roles.ts';
import { makeNegotiation } from '../../envs/negotiation/env.ts';
import { BuiltinPolicy } from '../../policy/builtin-policy.ts';
import type { IterationMetrics, RlConfigInput } from '../rl.ts';
import { decodeRoleCheckpoint, encodeRoleCheckpoint } from './role-checkpoint.ts';
import { loraRoleModels, ScriptedBuiltinPolicy } from './role-test-fixture.ts';
import { runMultiAgentRl, type MultiAgentCheckpoint } from './run-multi-agent-rl.ts';

const config: RlConfigInput = {
  algo: 'grpo',
  klCoef: 0,
  iterations: 3,
  tasksPerIteration: 2,
  groupSize: 3,
  maxTurns: 3,
  maxNewTokens: 24,
  minibatchSize: 4,
  learningRate: 1e-2,
  validateEvery: 0,
  validationEpisodes: 2,
  systemPrompt: false,
  historyTurns: 'all',
  seed: 4,
};
const league = { snapshotEvery: 1, opponentRate: 0.6, poolSize: 2 };
const timing = new Set(['seconds', 'rolloutTokensPerSecond', 'trainTokensPerSecond']);
const proposals = ['<answer>take 1 0 0</answer>', '<answer>take 0 1 1</answer>', '<answer>take 1 1 1</answer>'];
const answers = ['<answer>accept</answer>', '<answer>take 0 0 1</answer>'];

/** Alice and Bob as LoRA adapters over one base; their states restored when given. */
async function roles(states?: ReadonlyMap<string, Uint8Array>) {
  const [aliceModel, bobModel] = await loraRoleModels([1, 2]);
  if (aliceModel === undefined || bobModel === undefined) throw new TypeError('two models');
  const alice = new ScriptedBuiltinPolicy(aliceModel, proposals);
  const bob = new ScriptedBuiltinPolicy(bobModel, answers);
  for (const [name, policy] of [
    ['alice', alice],
    ['bob', bob],
  ] as const) {
    const state = states?.get(name);
    if (state !== undefined) await policy.loadState(state);
  }
  const base = await aliceModel.baseParams();
  return { alice, bob, restoreSnapshot: (state: Uint8Array) => BuiltinPolicy.fromState(state, { baseParams: base }) };
}

async function train(
  iterations: number,
  resume?: Uint8Array,
): Promise<{ history: IterationMetrics[]; last: Uint8Array | undefined; alice: BuiltinPolicy; bob: BuiltinPolicy }> {
  const decoded = resume === undefined ? undefined : decodeRoleCheckpoint(resume);
  const { alice, bob, restoreSnapshot } = await roles(decoded?.trainers);
  let last: Uint8Array | undefined;
  const { history } = await runMultiAgentRl({
    env: () => makeNegotiation({ maxTurns: 3 }),
    roles: negotiationRoles(),
    players: { alice: { policy: alice }, bob: { policy: bob } },
    config: { ...config, iterations },
    league,
    restoreSnapshot,
    ...(decoded === undefined ? {} : { resume: decoded }),
    onIteration: async (_metrics, checkpoint: MultiAgentCheckpoint) => {
      const trainers = new Map([
        ['alice', await alice.saveState()],
        ['bob', await bob.saveState()],
      ]);
      last = encodeRoleCheckpoint({ ...checkpoint, trainers });
    },
  });
  return { history, last, alice, bob };
}

const untimed = (m: IterationMetrics | undefined) =>
  Object.fromEntries(Object.entries(m ?? {}).filter(([key]) => !timing.has(key)));

test('a resumed run restores every role (weights, moments, RNG) and the league, and continues as the uninterrupted one', async () => {
  const straight = await train(3);
  const firstPart = await train(2);
  assert.ok(firstPart.last !== undefined);
  const resumed = await train(3, firstPart.last);
  assert.equal(resumed.history.length, 1, 'only iteration 3 runs');
  assert.deepEqual(untimed(resumed.history[0]), untimed(straight.history[2]));
  const scalars = straight.history[2]?.scalars ?? {};
  assert.ok('league/alice/poolSize' in scalars && scalars['league/alice/poolSize'] === 2, 'the pool is capped at 2');
  const leagueGames = straight.history.flatMap((m) =>
    Object.keys(m.scalars ?? {}).filter((k) => k.endsWith('/winRate')),
  );
  assert.ok(leagueGames.length > 0, 'league matches were played (against restored snapshots)');
  for (const role of ['alice', 'bob'] as const) {
    const [a, b] = [await straight[role].saveState(), await resumed[role].saveState()];
    assert.deepEqual(a, b, `${role}'s weights and optimizer state after iteration 3`);
  }
  assert.deepEqual(
    decodeRoleCheckpoint(resumed.last ?? new Uint8Array()).state,
    decodeRoleCheckpoint(straight.last ?? new Uint8Array()).state,
    'the same league records and RNG states',
  );
});

test('a damaged role checkpoint is refused with CheckpointError', () => {
  const bytes = encodeRoleCheckpoint({
    state: { iteration: 1, rngStates: {} },
    trainers: new Map([['alice', new Uint8Array([1, 2, 3])]]),
    snapshots: new Map(),
  });
  assert.deepEqual(decodeRoleCheckpoint(bytes).trainers.get('alice'), new Uint8Array([1, 2, 3]));
  for (const damaged of [bytes.slice(0, -1), new Uint8Array([...bytes, 0]), bytes.slice(0, 10), new Uint8Array(4)])
    assert.throws(() => decodeRoleCheckpoint(damaged), CheckpointError);
});
