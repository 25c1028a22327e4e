/**
 * `agentrl gateway --base-quantization`: parsed and refused like serve-policy's, and a spawned gateway on the 8-bit base
 * answers a chat call (the banner names the base).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { parseFlags, validateFlags } from './flags.ts';
import { gatewayCommand, gatewayCommandSchema } from './gateway-command.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'agentrl.js');

/** True when `error` is an InvalidArgumentError whose message matches every pattern. */
function refusedWith(...patterns: RegExp[]) {
  return (error: unknown) => error instanceof InvalidArgumentError && patterns.every((p) => p.test(error.message));
}

test('gateway --base-quantization: float32 by default, int8 and int4 parse; another value, or one beside --backend tinker, is refused before anything loads', async () => {
  const parse = (argv: string[]) =>
    validateFlags(gatewayCommandSchema, parseFlags(gatewayCommandSchema, argv).values).baseQuantization;
  assert.equal(parse([]), 'float32');
  assert.equal(parse(['--base-quantization', 'int8']), 'int8');
  assert.equal(parse(['--base-quantization', 'int4']), 'int4');
  await assert.rejects(
    gatewayCommand(['/nonexistent/agentrl-checkpoint', '--base-quantization', 'int3']),
    refusedWith(/--base-quantization/, /float32, int8, int4/),
  );
  await assert.rejects(
    gatewayCommand(['--backend', 'tinker', '--base-quantization', 'int8']),
    refusedWith(/--base-quantization int8/, /tinker/),
  );
});

test('agentrl gateway --base-quantization int8: a tiny checkpoint on the 8-bit base answers a chat call; SIGTERM ends it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-cli-gateway-q-'));
  try {
    const model = await TransformerModel.create(
      { hiddenSize: 16, numLayers: 1, numHeads: 2, numKvHeads: 2, intermediateSize: 32, maxSeqLen: 64 },
      { seed: 2 },
    );
    await saveCheckpoint(join(dir, 'policy'), { config: model.config, params: await model.hostParams() });
    await model.release();
    const args = [
      'gateway',
      join(dir, 'policy'),
      '--port',
      '0',
      '--store',
      join(dir, 'runs.db'),
      '--base-quantization',
      'int8',
    ];
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /on (http:\/\/[0-9.:]+)\/v1/.exec(stderr);
        if (match) resolve(at(match, 1));
      });
      void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    try {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-id': 's1' },
        body: JSON.stringify({ model: 'policy', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8, seed: 1 }),
      });
      assert.equal(response.status, 200);
      const reply = (await response.json()) as {
        choices: { message: { role: string } }[];
        usage: { completion_tokens: number };
      };
      assert.equal(reply.choices[0]?.message.role, 'assistant');
      assert.ok(reply.usage.completion_tokens > 0 && reply.usage.completion_tokens <= 8, JSON.stringify(reply.usage));
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
    assert.match(stderr, /\(.*policy, int8 base, context 64/, 'the banner names the quantized base');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
