import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { at } from '../core/indexing.ts';
import { RunStore } from '../store/run-store.ts';
import { runCli, tinyTrainFlags } from './cli-test-fixture.ts';
import { monitorField } from './progress.ts';

test('agentrl train --monitor stop: the progress line names the fired signal, the run stops after that iteration and says why', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-monitor-'));
  try {
    const storePath = join(dir, 'runs.db');
    const result = await runCli([
      'train',
      '--out',
      join(dir, 'out'),
      '--store',
      storePath,
      ...tinyTrainFlags({ iterations: 3, monitor: 'stop' }),
      // Any real entropy is under this floor: entropy-collapse fires in the first iteration.
      '--monitor-thresholds',
      '{"entropyCollapse":{"floor":1e9}}',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /rl grpo \[[^\]]*\] 1\/3 .*⚠ monitor: entropy-collapse/);
    assert.match(result.stderr, /reward hacking\? entropy-collapse: mean token entropy/);
    assert.match(
      result.stderr,
      /train: stopped after iteration 1 of 3: the reward-hacking monitor \(mode stop\) saw entropy-collapse/,
    );
    assert.doesNotMatch(result.stderr, /\] 2\/3/);
    const store = RunStore.open(storePath);
    try {
      const [metrics] = store.metrics(store.run('bandit-grpo-1').id);
      assert.equal(store.metrics(store.run('bandit-grpo-1').id).length, 1);
      assert.equal(metrics?.values['monitor/entropy-collapse/fired'], 1);
      assert.equal(metrics?.values['monitor/answer-leakage/fired'], 0);
    } finally {
      store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('agentrl train --monitor-thresholds with a typo or a bad value: refused before the run is created (exit 2)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-monitor-'));
  try {
    const flags = ['train', '--store', join(dir, 'runs.db'), ...tinyTrainFlags()];
    const typo = await runCli([...flags, '--monitor-thresholds', '{"entropyColapse":{}}']);
    assert.equal(typo.code, 2, typo.stderr);
    assert.match(typo.stderr, /entropyColapse/);
    const mode = await runCli([...flags, '--monitor', 'panic']);
    assert.equal(mode.code, 2, mode.stderr);
    assert.match(mode.stderr, /warn.*stop.*off/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('monitorField: the fired signals by name, nothing when none fired', () => {
  const scalars = {
    'monitor/entropy-collapse/fired': 1,
    'monitor/entropy-collapse': 0.1,
    'monitor/answer-leakage/fired': 1,
    'monitor/length-drift/fired': 0,
    'reward/correct': 1,
  };
  assert.deepEqual(monitorField(scalars), { '⚠ monitor:': 'entropy-collapse, answer-leakage' });
  assert.deepEqual(monitorField({ 'monitor/length-drift/fired': 0 }), {});
  assert.deepEqual(monitorField(undefined), {});
  assert.equal(at(Object.keys(monitorField(scalars)), 0), '⚠ monitor:');
});
