import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Trajectory } from '../core/types.ts';
import { AgentRlError } from '../core/errors.ts';
import { GroupProducer } from './rl-async-producer.ts';
import { takeIteration } from './rl-async-take.ts';
import { rlConfigSchema } from './rl.ts';
import type { BuiltinPolicy } from '../policy/builtin-policy.ts';

/** A group of two episodes with rewards 0 and 1 (so it varies), one policy token each. */
function group(index: number): Trajectory[] {
  return [0, 1].map((reward) => ({
    tokens: [1, 2],
    lossMask: [0, 1],
    logprobs: [0, -1],
    tokenRewards: [0, reward],
    turns: [],
    totalReward: reward,
    success: reward === 1,
    groupId: `g#${index}`,
    seed: index,
    truncated: false,
  }));
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

test('producer: queued + in flight never exceed (k + 1)·T, and no group starts more than k versions ahead', async () => {
  let live = 0;
  let most = 0;
  const started: number[] = [];
  const producer = new GroupProducer({
    generate: async (index) => {
      started.push(index);
      live++;
      await tick();
      live--;
      return group(index);
    },
    tasksPerIteration: 2,
    maxStaleness: 1,
    groupsInFlight: 8,
    version: 0,
    nextGroup: 0,
  });
  const watch = setInterval(() => {
    most = Math.max(most, live + producer.queueDepth);
  }, 1);
  producer.start();
  await tick();
  await tick();
  // Version 0, k = 1, T = 2: groups 0–3 only, however long the trainer takes.
  assert.deepEqual(started, [0, 1, 2, 3]);
  for (let version = 1; version <= 3; version++) {
    for (let i = 0; i < 2; i++) {
      const taken = await producer.take();
      producer.accept();
      assert.ok(version - 1 - taken.version <= 1, `group ${taken.index} of version ${taken.version} at ${version - 1}`);
      for (const t of taken.trajectories) assert.equal(t.policyVersion, taken.version);
    }
    producer.publish(version);
    await tick();
  }
  clearInterval(watch);
  assert.ok(most <= producer.capacity, `most ${most} of capacity ${producer.capacity}`);
  assert.equal(producer.capacity, 4);
  await producer.stop();
  // Version 3: accepted 6 + outstanding ≤ (3 + 1 + 1)·2 = 10, and outstanding ≤ capacity 4.
  assert.deepEqual(producer.pending(), [6, 7, 8, 9]);
  assert.equal(producer.next(), 10);
});

test('a group finishing more than k versions late is dropped and counted; the iteration fills from fresh groups', async () => {
  const slow = deferred();
  const producer = new GroupProducer({
    generate: async (index) => {
      if (index === 0) await slow.promise;
      else await tick();
      return group(index);
    },
    tasksPerIteration: 1,
    maxStaleness: 1,
    groupsInFlight: 4,
    version: 0,
    nextGroup: 0,
  });
  const config = rlConfigSchema.parse({ tasksPerIteration: 1, async: { maxStaleness: 1 } });
  const policy = undefined as unknown as BuiltinPolicy; // not called: 'drop' re-scores nothing
  producer.start();
  const take = (trainerVersion: number) =>
    takeIteration({ producer, policy, config, dynamicSampling: false, trainerVersion, exclusive: undefined });
  for (let version = 0; version < 2; version++) {
    const taken = await take(version);
    assert.equal(taken.dropped, 0);
    producer.publish(version + 1);
  }
  slow.resolve();
  const third = await take(2);
  // Group 0 (version 0) arrived first at trainer version 2: 2 > k = 1.
  assert.equal(third.dropped, 2);
  assert.equal(third.batch.generated.length, 4);
  assert.equal(third.batch.kept.length, 2);
  assert.deepEqual(third.staleness, [0, 0], 'group 3, started at version 2');
  await producer.stop();
});

test('a producer error reaches the trainer (no hang), and stop() waits for the groups in flight', async () => {
  class Broken extends AgentRlError {}
  let finished = 0;
  const producer = new GroupProducer({
    generate: async (index) => {
      await tick();
      if (index === 1) throw new Broken('SAMPLER_DOWN', 'sampler down');
      await tick();
      finished++;
      return group(index);
    },
    tasksPerIteration: 4,
    maxStaleness: 1,
    groupsInFlight: 4,
    version: 0,
    nextGroup: 0,
  });
  producer.start();
  await assert.rejects(async () => {
    for (;;) await producer.take();
  }, Broken);
  await producer.stop();
  assert.equal(finished, 3, 'groups 0, 2, 3 ran to completion before stop() returned');
});
