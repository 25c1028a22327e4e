import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../core/rng.ts';
import type { Env, Observation, Trajectory } from '../core/types.ts';
import type { RoleSpec } from '../envs/role-spec.ts';
import { OnnxInference } from '../engine/onnx/onnx-inference.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { tinyLoraConfig, tinyModelConfig } from '../engine/tiny-model-fixture.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import type { Policy } from '../policy/types.ts';
import { multiAgentRollout } from './multi-agent-rollout.ts';

/** Two roles taking one turn each; an even seed lets `a` open, an odd one `b`: both act every turn. */
function relayEnv(): Env {
  let first = 'a';
  let steps = 0;
  const other = (role: string) => (role === 'a' ? 'b' : 'a');
  return {
    name: 'relay',
    reset: async ({ seed }) => {
      first = seed % 2 === 0 ? 'a' : 'b';
      steps = 0;
      return { text: `${first}: say something about ${seed}` };
    },
    step: async ({ text }) => {
      steps++;
      const observation: Observation = { text: `${other(first)}: the other said ${text.length} chars` };
      return { observation, reward: text.length / 100, done: steps === 2, truncated: false, info: {} };
    },
  };
}

const relayRoles: RoleSpec = {
  roles: ['a', 'b'],
  actingRole: (observation) => observation.text.slice(0, 1),
  stepRewards: (result, acting) => ({ [acting]: result.reward }),
};

const config = { ...tinyModelConfig, vocabSize: 272, maxSeqLen: 160 };

/** Two role policies over LoRA forks of one base (adapters drawn apart, so the roles differ). */
async function forkPolicies(): Promise<[BuiltinPolicy, BuiltinPolicy]> {
  const parent = await TransformerModel.create(config, { seed: 4, lora: tinyLoraConfig });
  const adapters = async (seed: number) => {
    const rng = new Rng(seed);
    const drawn = await parent.adapterParams();
    for (const tensor of drawn.values())
      for (let i = 0; i < tensor.data.length; i++) tensor.data[i] = 0.3 * rng.normal();
    return drawn;
  };
  const fork = await parent.forkAdapters({ adapters: await adapters(2) });
  parent.setAdapters(await adapters(1));
  return [new BuiltinPolicy({ model: parent }), new BuiltinPolicy({ model: fork })];
}

/** The same policy behind a plain object: the rollout cannot see it is built in, so it calls it alone. */
const opaque = (policy: BuiltinPolicy): Policy => ({
  tokenizer: policy.tokenizer,
  contextWindow: policy.contextWindow,
  generate: (request) => policy.generate(request),
  generateBatch: (requests) => policy.generateBatch(requests),
});

/** Grouped and plain generation calls made while `body` runs. */
async function countingCalls<R>(body: () => Promise<R>): Promise<{ result: R; grouped: number; plain: number }> {
  const { generateGroups, generate } = OnnxInference.prototype;
  const counts = { grouped: 0, plain: 0 };
  OnnxInference.prototype.generateGroups = function (...args) {
    counts.grouped++;
    return generateGroups.apply(this, args);
  };
  OnnxInference.prototype.generate = function (...args) {
    counts.plain++;
    return generate.apply(this, args);
  };
  try {
    return { result: await body(), ...counts };
  } finally {
    Object.assign(OnnxInference.prototype, { generateGroups, generate });
  }
}

const rollout = (a: Policy, b: Policy) =>
  multiAgentRollout({
    env: relayEnv,
    roles: relayRoles,
    players: { a: { policy: a }, b: { policy: b } },
    seeds: [0, 1, 2, 3],
    groupSize: 2,
    maxNewTokens: 8,
    samplingSeed: 5,
  });

const summary = (trajectories: Trajectory[]) =>
  trajectories.map((t) => ({ role: t.role, group: t.groupId, tokens: [...t.tokens], reward: t.totalReward }));

test('roles played by forks of one base: ONE generation call per turn for both roles, the same episodes as a call per role', async () => {
  const [a, b] = await forkPolicies();
  const together = await countingCalls(() => rollout(a, b));
  assert.deepEqual(
    { grouped: together.grouped, plain: together.plain },
    { grouped: 2, plain: 0 },
    'two turns, each one grouped call carrying both roles’ rows',
  );
  const apart = await countingCalls(() => rollout(opaque(a), opaque(b)));
  assert.deepEqual(
    { grouped: apart.grouped, plain: apart.plain },
    { grouped: 0, plain: 4 },
    'a call per role per turn',
  );
  assert.deepEqual(summary(together.result.trajectories), summary(apart.result.trajectories));
  together.result.trajectories.forEach((t, i) => {
    const other = apart.result.trajectories[i]!;
    t.logprobs.forEach((lp, k) => {
      assert.ok(Math.abs(lp - other.logprobs[k]!) <= 1e-5, `trajectory ${i} token ${k}`);
    });
  });
  assert.equal(together.result.trajectories.length, 16);
  assert.notDeepEqual(
    together.result.trajectories.filter((t) => t.role === 'a').map((t) => t.tokens.length),
    together.result.trajectories.filter((t) => t.role === 'b').map((t) => t.tokens.length),
    'the two forks answer differently',
  );
});

test('roles over separate bases: a generateBatch per role per turn, as before', async () => {
  const a = new BuiltinPolicy({ model: await TransformerModel.create(config, { seed: 4, lora: tinyLoraConfig }) });
  const b = new BuiltinPolicy({ model: await TransformerModel.create(config, { seed: 5, lora: tinyLoraConfig }) });
  const { grouped, plain } = await countingCalls(() => rollout(a, b));
  assert.deepEqual({ grouped, plain }, { grouped: 0, plain: 4 });
});
