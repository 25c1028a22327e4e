/**
 * `agentrl train --backend tinker`: the flags are checked before any run is created, and they reach
 * `TinkerPolicy.create`. The run against a real Tinker server is `npm run check:tinker`'s (SkyRL tx).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkOptions } from '../policy/tinker/index.ts';
import { checkBackendOptions, tinkerPolicyOptions } from './backend-setup.ts';
import { resolveTrainOptions } from './train-command.ts';

const bin = fileURLToPath(new URL('../../bin/agentrl.js', import.meta.url));

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TINKER_API_KEY: '' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

test('agentrl train --backend tinker: a missing --base-url, PPO, or clipping is a usage error before any run is created', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-backend-'));
  try {
    const store = join(dir, 'runs.db');
    const missing = await runCli([
      'train',
      '--env',
      'bandit',
      '--backend',
      'tinker',
      '--base-model',
      '/models/tiny',
      '--store',
      store,
    ]);
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(
      missing.stderr,
      /--backend tinker needs --base-url \(the Tinker server and the base model it serves\)/,
    );
    const ppo = await runCli([
      'train',
      '--env',
      'bandit',
      '--backend',
      'tinker',
      '--base-url',
      'http://127.0.0.1:9',
      '--base-model',
      'm',
      '--algo',
      'ppo',
      '--store',
      store,
    ]);
    assert.equal(ppo.code, 2, ppo.stderr);
    assert.match(ppo.stderr, /--algo ppo trains a critic \(a value head\), which the tinker backend does not have/);
    // Before: a hub name without its tokenizer trained on the byte tokenizer and exited 0.
    const hub = await runCli(
      ['train', '--env', 'bandit', '--backend', 'tinker', '--base-url', 'http://127.0.0.1:9', '--base-model'].concat([
        'Qwen/Qwen3-8B',
        '--store',
        store,
      ]),
    );
    assert.equal(hub.code, 2, hub.stderr);
    assert.match(hub.stderr, /pass --tokenizer <the model's folder or tokenizer\.json>/);
    const stray = await runCli(['train', '--env', 'bandit', '--base-url', 'http://127.0.0.1:9', '--store', store]);
    assert.equal(stray.code, 2, stray.stderr);
    assert.match(stray.stderr, /--base-url is a tinker backend flag; pass --backend tinker too/);
    assert.ok(!existsSync(store), 'no store was opened, so no run was created');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('--backend tinker flags: the backend preset sets maxGradNorm 0 (the SDK default), clipping is sent on the protobuf wire only, and the flags reach TinkerPolicy.create', () => {
  const argv = [
    '--env',
    'bandit',
    '--backend',
    'tinker',
    '--base-url',
    'http://127.0.0.1:8765',
    '--base-model',
    '/models/tiny',
    '--tokenizer',
    'bytes',
    '--lora-rank',
    '4',
    '--tinker-loss-reduction',
    'sequence-mean',
    '--max-seq-len',
    '128',
    '--seed',
    '3',
  ];
  const { options, sources } = resolveTrainOptions(argv);
  assert.equal(options.maxGradNorm, 0);
  assert.match(sources.maxGradNorm!, /the tinker backend/);
  checkBackendOptions(options);
  const created = tinkerPolicyOptions(options);
  assert.deepEqual(created, {
    baseUrl: 'http://127.0.0.1:8765',
    baseModel: '/models/tiny',
    rank: 4,
    seed: 3,
    lossReduction: 'sequence-mean',
    contextWindow: 128,
    wire: 'protobuf',
  });
  checkOptions(created);
  // An explicit clip goes to the server as AdamParams.grad_clip_norm on the protobuf wire (before:
  // refused on every wire); the JSON wire (a raw SkyRL 0.3.0, which drops it) refuses it, naming
  // both flags. The builtin default stays 1.
  const clipped = resolveTrainOptions([...argv, '--max-grad-norm', '1']).options;
  checkBackendOptions(clipped);
  assert.equal(clipped.maxGradNorm, 1);
  assert.throws(
    () => checkBackendOptions(resolveTrainOptions([...argv, '--max-grad-norm', '1', '--tinker-wire', 'json']).options),
    /--tinker-wire json \(a raw SkyRL 0\.3\.0 server\) drops AdamParams\.grad_clip_norm.*set --max-grad-norm 0/,
  );
  assert.equal(tinkerPolicyOptions(resolveTrainOptions([...argv, '--tinker-wire', 'json']).options).wire, 'json');
  assert.throws(
    () => checkBackendOptions(resolveTrainOptions([...argv, '--entropy-coef', '0.01']).options),
    /cannot train an entropy bonus/,
  );
  // Before: --temperature 0.7 failed only after the warm start and the first rollout.
  assert.throws(
    () => checkBackendOptions(resolveTrainOptions([...argv, '--temperature', '0.7']).options),
    /the tinker backend scores log-probs at temperature 1 only.*set --temperature 1 \(got 0\.7\)/,
  );
  assert.throws(
    () =>
      checkBackendOptions(
        resolveTrainOptions(argv.filter((flag) => flag !== '--tokenizer' && flag !== 'bytes')).options,
      ),
    /--base-model \/models\/tiny is not a local folder holding tokenizer\.json.*pass --tokenizer/,
  );
  // A tinker flag the built-in engine would ignore is refused (before: --tinker-wire did not exist; a loss reduction was ignored).
  for (const flag of [
    ['--tinker-wire', 'json'],
    ['--tinker-loss-reduction', 'sequence-mean'],
  ])
    assert.throws(
      () => checkBackendOptions(resolveTrainOptions(['--env', 'bandit', ...flag]).options),
      new RegExp(`${flag[0]} ${flag[1]} is a tinker backend flag; pass --backend tinker too`),
    );
  assert.equal(resolveTrainOptions(['--env', 'bandit']).options.maxGradNorm, 1);
  assert.equal(resolveTrainOptions(['--env', 'bandit']).options.backend, 'builtin');
});
