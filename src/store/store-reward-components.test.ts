import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { RunStore } from './run-store.ts';
import { schemaSql } from './schema.ts';
import { syntheticStep, syntheticTrajectory } from './test-data.ts';

/** The version-2 schema: today's less the version-3 trajectory columns. */
const version2Sql = schemaSql.replace(/\n\s*reward_components TEXT,\n\s*reward_failures\s+TEXT,/, '');

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-store-rewards-'));
  try {
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('run store: trajectories keep their reward components and failures', async () => {
  await withDir(async (dir) => {
    const store = RunStore.open(join(dir, 'runs.db'));
    const run = store.createRun({ command: 'train', seed: 0, gitCommit: null, config: {} });
    const scored = { ...syntheticTrajectory(1, 0, 8), rewardComponents: { envReward: 1, 'format-ok': 0.5 } };
    const failed = {
      ...syntheticTrajectory(1, 1, 8),
      rewardComponents: { envReward: 0 },
      rewardFailures: { judge: 'JudgeError: 503 after 3 attempts' },
    };
    const plain = syntheticTrajectory(1, 2, 8);
    store.recordStep(run.id, { step: 1, metrics: { 'reward/envReward': 0.5 }, trajectories: [scored, failed, plain] });
    assert.deepEqual(store.trajectory(run.id, 1, 0)?.rewardComponents, { envReward: 1, 'format-ok': 0.5 });
    assert.equal(store.trajectory(run.id, 1, 0)?.rewardFailures, undefined);
    assert.deepEqual(store.trajectory(run.id, 1, 1)?.rewardFailures, { judge: 'JudgeError: 503 after 3 attempts' });
    assert.equal('rewardComponents' in (store.trajectory(run.id, 1, 2) ?? {}), false);
    assert.deepEqual(store.metrics(run.id)[0]?.values, { 'reward/envReward': 0.5 });
    store.close();
  });
});

test('run store: a version-2 file is read as it is read-only, and gets the reward columns when opened for writing', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'v2.db');
    const db = new Database(file);
    db.exec(version2Sql);
    db.exec(`INSERT INTO runs (id, name, command, status, seed, config, created_at, updated_at)
      VALUES (1, 'bandit-grpo-1', 'train', 'completed', 1, '{}', 't', 't');`);
    db.pragma('user_version = 2');
    db.close();
    // A version-2 row, written with the version-2 columns only.
    const writer = new Database(file);
    const t = syntheticTrajectory(1, 0, 4);
    writer
      .prepare(
        `INSERT INTO trajectories (run_id, step, idx, group_id, seed, total_reward, success, truncated, messages, tokens, pieces, loss_mask, logprobs, rewards, advantages, turns)
         VALUES (1, 1, 0, ?, ?, ?, 1, 0, ?, ?, ?, ?, ?, ?, NULL, ?)`,
      )
      .run(
        t.groupId,
        t.seed,
        t.totalReward,
        ...['messages', 'tokens', 'pieces', 'lossMask', 'logprobs', 'rewards', 'turns'].map((k) =>
          JSON.stringify(t[k as keyof typeof t]),
        ),
      );
    writer.close();

    const reader = RunStore.open(file, { readonly: true });
    const read = reader.trajectory(1, 1, 0);
    assert.equal(read?.totalReward, t.totalReward);
    assert.equal(read?.rewardComponents, undefined);
    reader.close();

    const store = RunStore.open(file);
    assert.equal(store.trajectory(1, 1, 0)?.rewardComponents, undefined, 'the old row reads after the migration');
    store.recordStep(1, {
      ...syntheticStep(2, 4),
      trajectories: [{ ...syntheticTrajectory(2, 0, 4), rewardComponents: { envSuccess: 1 } }],
    });
    assert.deepEqual(store.trajectory(1, 2, 0)?.rewardComponents, { envSuccess: 1 });
    assert.equal(store.integrityCheck(), 'ok');
    store.close();
    const check = new Database(file, { readonly: true });
    assert.equal(check.pragma('user_version', { simple: true }), 3);
    check.close();
  });
});
