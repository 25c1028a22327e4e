/**
 * `agentrl sft|dpo --backend tinker`: train's backend flags and refusals (checked before any work),
 * and an SFT run through the CLI against the loopback SDK-shaped server. The runs against a real
 * Tinker server are `npm run check:tinker`'s (SkyRL).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startFakeServer } from '../policy/tinker/sdk-shaped-server.ts';
import { resolveDpoOptions } from './dpo-command.ts';

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

const tinkerFlags = (baseModel: string) => [
  '--backend',
  'tinker',
  '--base-url',
  'http://127.0.0.1:9',
  '--base-model',
  baseModel,
];

test('agentrl sft|dpo --backend tinker: the backend flags are taken and refused as for train, before any run or request', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-sft-dpo-backend-'));
  try {
    const store = join(dir, 'runs.db');
    const data = join(dir, 'chat.jsonl');
    await writeFile(
      data,
      `${JSON.stringify({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'ok' },
        ],
      })}\n`,
    );
    // Before: "unknown flag --backend" for both commands.
    const dpoHub = await runCli(['dpo', '--env', 'bandit', ...tinkerFlags('Qwen/Qwen3-8B'), '--store', store]);
    assert.equal(dpoHub.code, 2, dpoHub.stderr);
    assert.match(dpoHub.stderr, /pass --tokenizer <the model's folder or tokenizer\.json>/);
    assert.ok(!existsSync(store), 'no store was opened, so no run was created');
    const sftHub = await runCli(['sft', '--data', data, ...tinkerFlags('Qwen/Qwen3-8B')]);
    assert.equal(sftHub.code, 2, sftHub.stderr);
    assert.match(sftHub.stderr, /pass --tokenizer/);
    const sftClip = await runCli([
      'sft',
      '--data',
      data,
      ...tinkerFlags('m'),
      '--tokenizer',
      'bytes',
      '--max-grad-norm',
      '1',
      '--tinker-wire',
      'json',
    ]);
    assert.equal(sftClip.code, 2, sftClip.stderr);
    assert.match(sftClip.stderr, /--tinker-wire json \(a raw SkyRL 0\.3\.0 server\) drops AdamParams\.grad_clip_norm/);
    const sftLora = await runCli(['sft', '--data', data, '--lora-rank', '8']);
    assert.equal(sftLora.code, 2, sftLora.stderr);
    assert.match(sftLora.stderr, /--lora-rank/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const { options } = resolveDpoOptions(['--env', 'bandit', ...tinkerFlags('m'), '--tokenizer', 'bytes']);
  assert.deepEqual([options.backend, options.maxGradNorm, options.loraRank], ['tinker', 0, 8]);
  assert.equal(resolveDpoOptions(['--env', 'bandit']).options.backend, 'builtin');
});

test('agentrl sft --backend tinker trains a LoRA on the server through the SDK protocol and writes the checkpoint record', async () => {
  const server = await startFakeServer();
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-sft-tinker-'));
  try {
    const data = join(dir, 'chat.jsonl');
    const line = (n: number) =>
      JSON.stringify({
        messages: [
          { role: 'user', content: `q${n}` },
          { role: 'assistant', content: `a${n}` },
        ],
      });
    await writeFile(data, `${[0, 1, 2, 3].map(line).join('\n')}\n`);
    const out = join(dir, 'out');
    const result = await runCli(
      ['sft', '--data', data, '--backend', 'tinker', '--base-url', server.baseUrl, '--base-model', 'm'].concat([
        '--tokenizer',
        'bytes',
        '--steps',
        '2',
        '--batch-size',
        '2',
        '--out',
        out,
        '--held-out-fraction',
        '0',
        '--max-grad-norm',
        '0.5',
      ]),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(server.refusals, []);
    assert.ok((server.applied.optim_step ?? 0) >= 2, JSON.stringify(server.applied));
    // --max-grad-norm reaches the server as AdamParams.grad_clip_norm (before: refused for tinker).
    const clips = server.log
      .filter((entry) => entry.path === '/api/v1/optim_step')
      .map((entry) => (entry.body.adam_params as { grad_clip_norm?: number }).grad_clip_norm);
    assert.ok(clips.length >= 2 && clips.every((clip) => clip === 0.5), JSON.stringify(clips));
    assert.ok(existsSync(join(out, 'tinker-checkpoint.json')));
    assert.match(await readFile(join(out, 'tinker-checkpoint.json'), 'utf8'), /"tinkerPath": "tinker:\/\/.*"step": 2/s);
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});
