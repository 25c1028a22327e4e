/**
 * `agentrl train --env negotiation --policies per-role --backend tinker`: each role is its own
 * Tinker training client (its own model on the server, its own optimizer state there), checked
 * against the loopback SDK-shaped server, which refuses what the SDK would not send. The server
 * samples a fixed valid move, so both roles act and both train.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { startFakeServer } from '../policy/tinker/sdk-shaped-server.ts';
import { runCli } from './cli-test-fixture.ts';

test('train --policies per-role --backend tinker: a training client per role, each stepped once an iteration', async () => {
  const server = await startFakeServer({ sampledTokens: byteTokenizer.encode('<answer>take 0 0 0</answer>') });
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-roles-tinker-'));
  try {
    const out = join(dir, 'ckpt');
    const flags = {
      env: 'negotiation',
      policies: 'per-role',
      backend: 'tinker',
      'base-url': server.baseUrl,
      'base-model': 'm',
      tokenizer: 'bytes',
      iterations: 2,
      'tasks-per-iteration': 2,
      'group-size': 2,
      'max-turns': 4,
      'max-new-tokens': 32,
      'test-episodes': 2,
      'kl-coef': 0,
      store: join(dir, 'runs.db'),
      out,
    };
    const args = ['train', '--no-warm-start', ...Object.entries(flags).flatMap(([k, v]) => [`--${k}`, String(v)])];
    const result = await runCli(args, { env: { TINKER_API_KEY: '' } });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(server.refusals, []);
    const stepsByModel = new Map<string, number>();
    const trainedModels = new Set<string>();
    for (const entry of server.log) {
      const model = String(entry.body.model_id ?? '');
      if (entry.path === '/api/v1/optim_step') stepsByModel.set(model, (stepsByModel.get(model) ?? 0) + 1);
      if (entry.path === '/api/v1/forward_backward') trainedModels.add(model);
    }
    // Two roles, two models on the server, each with its own optimizer steps: one per iteration.
    assert.deepEqual([...stepsByModel.values()], [2, 2], JSON.stringify([...stepsByModel]));
    assert.deepEqual(new Set(stepsByModel.keys()), trainedModels);
    for (const role of ['alice', 'bob']) assert.ok(existsSync(join(out, 'final', role)), `final/${role}`);
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});
