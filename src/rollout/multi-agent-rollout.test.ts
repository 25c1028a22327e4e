import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { makeNegotiation } from '../envs/negotiation/env.ts';
import { negotiationExpert } from '../envs/negotiation/expert.ts';
import { negotiationRoles } from '../envs/negotiation/roles.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import type { GenerateRequest, Generation } from '../policy/types.ts';
import { multiAgentRollout } from './multi-agent-rollout.ts';

/** Alice keeps 1 book + 2 balls (worth 8 to her), Bob then gets 2 hats + 1 ball (worth 6 to him). */
const task = {
  counts: [1, 2, 3],
  values: [
    [4, 0, 2],
    [0, 2, 2],
  ],
};

/** A scripted policy that counts its `generateBatch` calls and their sizes. */
class CountingPolicy extends ScriptedPolicy {
  readonly batches: number[] = [];
  override async generateBatch(requests: readonly GenerateRequest[]): Promise<Generation[]> {
    this.batches.push(requests.length);
    return super.generateBatch(requests);
  }
}

const proposer = (reply = '<answer>take 1 0 2</answer>') => new CountingPolicy({ reply: [reply] });
const accepter = () => new CountingPolicy({ reply: ['<answer>accept</answer>'] });
const decode = (tokens: readonly number[]) => byteTokenizer.decode([...tokens]);

test('each role its own policy and transcript: Alice 0.8, Bob 0.6, each sees only its own values', async () => {
  const alice = proposer();
  const bob = accepter();
  const { trajectories, outcomes } = await multiAgentRollout({
    env: () => makeNegotiation(),
    roles: negotiationRoles(),
    players: { alice: { policy: alice }, bob: { policy: bob } },
    seeds: [0],
    tasks: [task],
  });
  assert.deepEqual(
    trajectories.map((t) => [t.role, t.groupId, t.turns.length, t.totalReward]),
    [
      ['alice', 'negotiation:0:task0/alice', 1, 0.8],
      ['bob', 'negotiation:0:task0/bob', 1, 0.6],
    ],
  );
  const [aliceText, bobText] = trajectories.map((t) => decode(t.tokens));
  assert.match(aliceText ?? '', /You are Alice\..*Your values: books 4, hats 0, balls 2/s);
  assert.doesNotMatch(aliceText ?? '', /You are Bob|<\|assistant\|><answer>accept/);
  assert.match(
    bobText ?? '',
    /You are Bob\..*Your values: books 0, hats 2, balls 2\.\nAlice proposed to take 1 0 2\./s,
  );
  assert.doesNotMatch(bobText ?? '', /<answer>take 1 0 2/, "Bob never sees Alice's reply text, only the env's account");
  for (const t of trajectories) {
    const rewardToken = t.tokenRewards.findIndex((r) => r !== 0);
    assert.equal(t.lossMask[rewardToken], 1, 'the reward sits on a generated token');
  }
  assert.deepEqual(outcomes, [
    {
      seed: 0,
      groupId: 'negotiation:0:task0',
      rewards: { alice: 0.8, bob: 0.6 },
      success: true,
      truncated: false,
      turns: 2,
    },
  ]);
});

test('one generateBatch per distinct policy per turn; a shared policy plays both roles in one call per turn', async () => {
  const alice = proposer();
  const bob = accepter();
  const seeds = [1, 2, 3];
  await multiAgentRollout({
    env: () => makeNegotiation(),
    roles: negotiationRoles(),
    players: { alice: { policy: alice }, bob: { policy: bob } },
    seeds,
    groupSize: 2,
  });
  assert.deepEqual(alice.batches, [6], 'turn 1: every episode is Alice’s, one call of 6');
  assert.deepEqual(bob.batches, [6], 'turn 2: every episode is Bob’s, one call of 6');

  const shared = new CountingPolicy({
    reply: ({ messages }) =>
      (messages.at(-1)?.content ?? '').includes('proposed') ? '<answer>accept</answer>' : '<answer>take 1 1 1</answer>',
  });
  const result = await multiAgentRollout({
    env: () => makeNegotiation(),
    roles: negotiationRoles(),
    players: { alice: { policy: shared }, bob: { policy: shared } },
    seeds,
    groupSize: 2,
  });
  assert.deepEqual(shared.batches, [6, 6]);
  assert.equal(result.trajectories.length, 12, 'still one trajectory per role per episode');
  assert.deepEqual([...new Set(result.trajectories.map((t) => t.role))], ['alice', 'bob']);
});

test("joint reward pays both the mean; an invalid turn's penalty is the actor's alone", async () => {
  const alice = new CountingPolicy({ reply: ['<answer>accept</answer>', '<answer>take 1 0 2</answer>'] });
  const { trajectories, outcomes } = await multiAgentRollout({
    env: () => makeNegotiation({ formatPenalty: 0.1 }),
    roles: negotiationRoles({ reward: 'joint' }),
    players: { alice: { policy: alice }, bob: { policy: accepter() } },
    seeds: [0],
    tasks: [task],
  });
  const [aliceTrajectory, bobTrajectory] = trajectories;
  assert.deepEqual(
    aliceTrajectory?.turns.map((turn) => [turn.reward, turn.invalidAction]),
    [
      [-0.1, true],
      [0.7, false],
    ],
  );
  assert.deepEqual(
    bobTrajectory?.turns.map((turn) => turn.reward),
    [0.7],
  );
  assert.deepEqual(at(outcomes, 0).rewards, { alice: 0.6, bob: 0.7 });
  // Components per role: a step's components go to each role it pays — the deal to both, the invalid turn to Alice only.
  assert.deepEqual(
    trajectories.map((t) => [t.role, t.rewardComponents]),
    [
      ['alice', { deal: 0.7, invalid_action: 1 }],
      ['bob', { deal: 0.7, invalid_action: 0 }],
    ],
  );
});

test('an env component that is not a finite number is a named failure of the roles it paid, never 0', async () => {
  const env = () => {
    const inner = makeNegotiation();
    return {
      name: inner.name,
      reset: inner.reset.bind(inner),
      step: async (action: { text: string }) => {
        const result = await inner.step(action);
        return { ...result, info: { ...result.info, rewardComponents: { deal: Number.NaN, 'bad/name': 1 } } };
      },
    };
  };
  const { trajectories } = await multiAgentRollout({
    env,
    roles: negotiationRoles(),
    players: { alice: { policy: proposer() }, bob: { policy: accepter() } },
    seeds: [0],
    tasks: [task],
  });
  for (const t of trajectories) {
    assert.equal(t.rewardComponents, undefined, `${t.role}: nothing summed`);
    assert.match(t.rewardFailures?.deal ?? '', /reported NaN at turn 0, not a finite number/);
    assert.match(t.rewardFailures?.rewardComponents ?? '', /"bad\/name" at turn 0: not a reward name/);
  }
});

test('a scripted expert opponent: only the policy role has trajectories, the outcome has both rewards', async () => {
  const { trajectories, outcomes } = await multiAgentRollout({
    env: () => makeNegotiation(),
    roles: negotiationRoles(),
    players: {
      alice: { policy: proposer('<answer>take 1 2 3</answer>') },
      bob: { expert: ({ seed }) => negotiationExpert({ seed }) },
    },
    seeds: [0],
    tasks: [task],
    maxTurns: 6,
  });
  assert.deepEqual(
    trajectories.map((t) => t.role),
    ['alice'],
  );
  // Alice grabs everything; the cooperative expert counters with its joint-optimal split, Alice repeats, … out of turns.
  const outcome = at(outcomes, 0);
  assert.equal(outcome.truncated, true);
  assert.deepEqual(outcome.rewards, { alice: 0, bob: 0 });
  assert.equal(at(trajectories, 0).turns.length, 3);
});

test('a role without a player, or an env naming an unknown role, is refused by name', async () => {
  await assert.rejects(
    multiAgentRollout({
      env: () => makeNegotiation(),
      roles: negotiationRoles(),
      players: { alice: { policy: proposer() } },
      seeds: [0],
    }),
    (error: unknown) => error instanceof InvalidArgumentError && /no player for role "bob"/.test(error.message),
  );
  await assert.rejects(
    multiAgentRollout({
      env: () => makeNegotiation(),
      roles: { ...negotiationRoles(), actingRole: () => 'carol' },
      players: { alice: { policy: proposer() }, bob: { policy: accepter() } },
      seeds: [0],
    }),
    /asks role "carol" to act; its roles are alice, bob/,
  );
});
