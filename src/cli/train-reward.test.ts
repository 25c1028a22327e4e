import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RunStore } from '../store/run-store.ts';
import { runCli, tinyTrainFlags } from './cli-test-fixture.ts';

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-train-reward-'));
  try {
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('agentrl train --reward name=weight,…: the run trains on the rubric; its components are in the run store per trajectory and per iteration', async () => {
  await withDir(async (dir) => {
    const storePath = join(dir, 'runs.db');
    const result = await runCli([
      'train',
      '--out',
      join(dir, 'out'),
      '--store',
      storePath,
      ...tinyTrainFlags({ iterations: 1, monitor: 'off' }),
      '--reward',
      'envSuccess=1,actionFormat=0.5,overlong=0.1',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const store = RunStore.open(storePath, { readonly: true });
    try {
      const run = store.run('bandit-grpo-1');
      assert.equal(run.config.reward, 'envSuccess=1,actionFormat=0.5,overlong=0.1');
      const [metrics] = store.metrics(run.id);
      for (const name of ['envSuccess', 'actionFormat', 'overlong']) {
        assert.ok(Number.isFinite(metrics?.values[`reward/${name}`]), `reward/${name} recorded`);
        assert.equal(metrics?.values[`reward/${name}/failures`], 0);
      }
      assert.equal(metrics?.values.rewardFailures, 0);
      const trajectories = [...store.iterateTrajectories(run.id)];
      assert.equal(trajectories.length, 8);
      for (const t of trajectories) {
        const c = t.rewardComponents ?? {};
        // The rubric's components beside the bandit's own (env components are kept: src/rewards/trajectory-scoring.ts).
        for (const name of ['actionFormat', 'envSuccess', 'overlong']) assert.ok(Number.isFinite(c[name]), name);
        assert.equal(c.envSuccess, t.success ? 1 : 0);
        const total = (c.envSuccess ?? 0) + 0.5 * (c.actionFormat ?? 0) + 0.1 * (c.overlong ?? 0);
        assert.ok(Math.abs(t.totalReward - total) < 1e-12, `total ${t.totalReward} = Σ w·r ${total}`);
      }
    } finally {
      store.close();
    }
  });
});

test('agentrl train --reward: an unknown name lists the built-ins (exit 2, no run created); a module’s default rubric is used', async () => {
  await withDir(async (dir) => {
    const storePath = join(dir, 'runs.db');
    const flags = [
      'train',
      '--out',
      join(dir, 'out'),
      '--store',
      storePath,
      ...tinyTrainFlags({ iterations: 1, monitor: 'off' }),
    ];
    const typo = await runCli([...flags, '--reward', 'envSucess=1']);
    assert.equal(typo.code, 2, typo.stderr);
    assert.match(
      typo.stderr,
      /unknown reward "envSucess"; the built-in rewards are envReward, envSuccess, actionFormat, overlong/,
    );
    assert.equal(existsSync(storePath), false, 'refused before the store was opened');
    const notRubric = join(dir, 'not-a-rubric.mjs');
    await writeFile(notRubric, 'export default { names: [] };\n');
    const bad = await runCli([...flags, '--reward', notRubric]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /default export is not a rubric/);

    // .mts: an ES module wherever it lies (a .ts file outside a "type": "module" package is CommonJS).
    const module = join(dir, 'short-replies.mts');
    const rewards = new URL('../rewards/index.ts', import.meta.url).href;
    await writeFile(
      module,
      `import { envReward, reward, rubric } from '${rewards}';\n` +
        `const brief = reward('brief', (c) => (c.trajectory.turns.every((t) => t.end - t.start <= 12) ? 1 : 0), { kind: 'shaping' });\n` +
        'export default rubric([envReward, brief], { envReward: 1, brief: 0.25 });\n',
    );
    const result = await runCli([...flags, '--reward', module]);
    assert.equal(result.code, 0, result.stderr);
    const store = RunStore.open(storePath, { readonly: true });
    try {
      const run = store.run('bandit-grpo-1');
      const trajectories = [...store.iterateTrajectories(run.id)];
      assert.ok(trajectories.length > 0);
      for (const t of trajectories) {
        assert.ok(Number.isFinite(t.rewardComponents?.brief) && Number.isFinite(t.rewardComponents?.envReward));
        const total = (t.rewardComponents?.envReward ?? 0) + 0.25 * (t.rewardComponents?.brief ?? 0);
        assert.ok(Math.abs(t.totalReward - total) < 1e-12);
      }
      assert.ok(Number.isFinite(store.metrics(run.id)[0]?.values['reward/brief']));
    } finally {
      store.close();
    }
  });
});
