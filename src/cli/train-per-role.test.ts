/**
 * `agentrl train --env negotiation --policies per-role` as real processes: both roles trained side
 * by side with a league, each role's series in the run store, each role's weights in final/<role>,
 * `--resume` continuing with every role restored, and each role's own reward-hacking monitor.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RunStore } from '../store/run-store.ts';
import { runCli, tinyTrainFlags } from './cli-test-fixture.ts';
import { tinyModelFolder } from './tiny-model-folder.ts';

const flags = (dir: string, overrides: Record<string, string | number> = {}) => [
  'train',
  ...tinyTrainFlags({
    env: 'negotiation',
    policies: 'per-role',
    'league-every': 1,
    'league-opponent-rate': 0.5,
    'max-seq-len': 256,
    'max-turns': 4,
    'max-new-tokens': 20,
    'tasks-per-iteration': 2,
    'group-size': 2,
    'test-episodes': 2,
    'kl-coef': 0,
    store: join(dir, 'runs.db'),
    'run-name': 'roles',
    out: join(dir, 'ckpt'),
    ...overrides,
  }),
];

test('train --policies per-role: two roles side by side, role/<name>/* series, final/<role> weights, and a resume restoring both', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-roles-'));
  try {
    const first = await runCli(flags(dir, { iterations: 2 }));
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /before RL, each role against the scripted expert: alice reward .*; bob reward/);
    assert.match(first.stdout, /negotiation \/ grpo \/ a policy per role/);
    for (const role of ['alice', 'bob']) assert.ok(existsSync(join(dir, 'ckpt', 'final', role, 'config.json')), role);

    const second = await runCli(['train', '--resume', 'roles', '--store', join(dir, 'runs.db'), '--iterations', '3']);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /resuming run roles after iteration 2 \(1 to go\)/);
    const store = RunStore.open(join(dir, 'runs.db'));
    try {
      const run = store.run('roles');
      const steps = store.metrics(run.id);
      assert.deepEqual(
        steps.map((m) => m.step),
        [1, 2, 3],
      );
      const keys = Object.keys(steps.at(-1)?.values ?? {});
      // Bob's reward series appears once Bob gets a turn (the tiny warm start's Alice may stay invalid); his trainer's always.
      // --monitor warn (the default): each role's own reward-hacking monitor; the env's components per role.
      const expected = [
        'role/alice/reward',
        'role/alice/loss',
        'role/bob/trained',
        'league/bob/poolSize',
        'role/alice/monitor/entropy-collapse/fired',
        'role/alice/reward/deal',
      ];
      for (const key of [...expected, 'role/alice/vsFixed/winRate', 'role/bob/vsFixed/winRate'])
        assert.ok(keys.includes(key), `${key} in ${keys.join(', ')}`);
      assert.deepEqual(
        store.evaluations(run.id).flatMap((e) => (e.split === 'test' ? [e.step] : [])),
        [0, 2, 3],
        'before RL, after 2, after 3',
      );
    } finally {
      store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('train --policies per-role on a single-agent env, with --reward or with --max-minutes, is refused before any run', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-roles-'));
  try {
    const result = await runCli(flags(dir, { env: 'bandit', 'max-turns': 1 }));
    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      /a policy per role needs a multi-agent env \(negotiation, absolute-zero\); bandit has one agent/,
    );
    const withReward = await runCli(flags(dir, { reward: 'envReward=1' }));
    assert.equal(withReward.code, 2, withReward.stderr);
    assert.match(withReward.stderr, /--reward rubrics are not split per role/);
    const withBudget = await runCli(flags(dir, { 'max-minutes': 30 }));
    assert.equal(withBudget.code, 2, withBudget.stderr);
    assert.match(withBudget.stderr, /--max-minutes bounds the RL iterations of one policy/);
    assert.ok(!existsSync(join(dir, 'runs.db')), 'no run store was created');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('train --model … --lora-rank 4 --policies per-role: each role (and each league snapshot) its own adapters over one base; resumes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-roles-'));
  try {
    const model = await tinyModelFolder(join(dir, 'model'));
    const args = [
      'train',
      ...['--env', 'negotiation', '--policies', 'per-role', '--model', model, '--lora-rank', '4'],
      ...['--league-every', '1', '--league-opponent-rate', '0.5', '--max-turns', '4', '--max-new-tokens', '12'],
      ...['--tasks-per-iteration', '2', '--group-size', '2', '--test-episodes', '2', '--validate-every', '0'],
      ...['--validation-episodes', '2', '--kl-coef', '0.05', '--seed', '1', '--iterations', '1'],
      ...['--store', join(dir, 'runs.db'), '--run-name', 'lora-roles', '--out', join(dir, 'ckpt')],
    ];
    const first = await runCli(args);
    assert.equal(first.code, 0, first.stderr);
    const second = await runCli([
      'train',
      '--resume',
      'lora-roles',
      '--store',
      join(dir, 'runs.db'),
      '--iterations',
      '2',
    ]);
    assert.equal(second.code, 0, second.stderr);
    for (const role of ['alice', 'bob'])
      assert.ok(existsSync(join(dir, 'ckpt', 'final', role, 'model.safetensors')), `${role}: its weights (merged)`);
    const store = RunStore.open(join(dir, 'runs.db'));
    try {
      const steps = store.metrics(store.run('lora-roles').id);
      assert.deepEqual(
        steps.map((m) => m.step),
        [1, 2],
      );
      assert.ok(Number.isFinite(steps.at(-1)?.values['role/alice/klToReference']), 'the KL reference (a fork) scored');
    } finally {
      store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
