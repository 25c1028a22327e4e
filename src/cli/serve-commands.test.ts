import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { parseFlags, validateFlags } from './flags.ts';
import { servePolicyCommand, servePolicyCommandSchema } from './serve-commands.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'agentrl.js');

/** Starts `agentrl <args>`, waits for the URL it prints, runs `check`, then stops it with `signal` (default SIGTERM); its exit code and stderr. */
async function whileServing(
  args: string[],
  check: (url: string) => Promise<void>,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /on (http:\/\/[0-9.:]+)/.exec(stderr);
      if (match) resolve(at(match, 1));
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  try {
    await check(url);
  } finally {
    child.kill(signal);
  }
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exit) => resolve(exit)));
  return { code, stderr };
}

/** A tiny random byte model saved as a checkpoint in a fresh folder: `use(folder, checkpoint)`, then the folder is removed. */
async function withTinyCheckpoint(
  maxSeqLen: number,
  use: (dir: string, checkpoint: string) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-cli-serve-'));
  try {
    const model = await TransformerModel.create({
      hiddenSize: 16,
      numLayers: 1,
      numHeads: 2,
      numKvHeads: 2,
      intermediateSize: 32,
      maxSeqLen,
    });
    await saveCheckpoint(join(dir, 'policy'), { config: model.config, params: await model.hostParams() });
    await model.release();
    await use(dir, join(dir, 'policy'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('agentrl serve-env and serve-policy serve until SIGTERM; export-hf writes the folder', async () => {
  const envCode = await whileServing(
    ['serve-env', 'calculator', '--port', '0', '--env-options', '{"numOperands": 2}'],
    async (url) => {
      assert.deepEqual(await (await fetch(`${url}/health`)).json(), { status: 'healthy' });
      const reset = (await (
        await fetch(`${url}/reset`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"seed": 4}',
        })
      ).json()) as {
        observation: { data: { expression: string } };
      };
      assert.equal(reset.observation.data.expression.split(/[-+*]/).length, 2, 'the env options reached the env');
    },
  );
  assert.equal(envCode.code, 0);

  await withTinyCheckpoint(64, async (dir, checkpoint) => {
    const policyCode = await whileServing(['serve-policy', checkpoint, '--port', '0'], async (url) => {
      const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] };
      assert.deepEqual(
        models.data.map((entry) => entry.id),
        ['policy'],
      );
    });
    assert.equal(policyCode.code, 0);
    assert.match(policyCode.stderr, /serve-policy: stopped \(SIGTERM\): connections closed, model released/);
    const exported = spawn(process.execPath, [bin, 'export-hf', checkpoint, '--out', join(dir, 'hf')], {
      stdio: 'ignore',
    });
    assert.equal(await new Promise((resolve) => exported.once('exit', resolve)), 0);
    assert.ok((await readdir(join(dir, 'hf'))).includes('special_tokens_map.json'));
  });
});

test('agentrl serve-policy: Ctrl-C (SIGINT) with a stream open closes the server, releases the model and exits 0', async () => {
  await withTinyCheckpoint(512, async (_dir, checkpoint) => {
    let reading: Promise<unknown> = Promise.resolve();
    const stopped = await whileServing(
      ['serve-policy', checkpoint, '--port', '0'],
      async (url) => {
        const response = await fetch(`${url}/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'policy', prompt: 'go', max_tokens: 400, stream: true }),
        });
        const reader = response.body!.getReader();
        await reader.read(); // the stream is open
        reading = (async () => {
          for (;;) if ((await reader.read()).done) return;
        })().catch(() => {}); // ends with the stream, whether it finished or was cut
      },
      'SIGINT',
    );
    await reading;
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stderr, /serve-policy: stopped \(SIGINT\): connections closed, model released/);
  });
});

test('serve-policy --base-quantization: float32 by default, int8 and int4 parse; another value is refused naming the allowed ones, before the model is read', async () => {
  const parse = (argv: string[]) =>
    validateFlags(servePolicyCommandSchema, parseFlags(servePolicyCommandSchema, argv).values).baseQuantization;
  assert.equal(parse([]), 'float32');
  assert.equal(parse(['--base-quantization', 'int8']), 'int8');
  assert.equal(parse(['--base-quantization', 'int4']), 'int4');
  await assert.rejects(
    servePolicyCommand(['/nonexistent/agentrl-checkpoint', '--base-quantization', 'int3']),
    (error: unknown) =>
      error instanceof InvalidArgumentError &&
      /--base-quantization/.test(error.message) &&
      /float32, int8, int4/.test(error.message),
  );
});

test('agentrl serve-policy --base-quantization int8: a tiny checkpoint served on the 8-bit base answers a chat request', async () => {
  await withTinyCheckpoint(64, async (_dir, checkpoint) => {
    const served = await whileServing(
      ['serve-policy', checkpoint, '--port', '0', '--base-quantization', 'int8'],
      async (url) => {
        const response = await fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'policy',
            messages: [{ role: 'user', content: 'hi' }],
            max_tokens: 8,
            seed: 1,
          }),
        });
        assert.equal(response.status, 200);
        const reply = (await response.json()) as {
          choices: { message: { role: string; content: string | null } }[];
          usage: { completion_tokens: number };
        };
        assert.equal(reply.choices[0]?.message.role, 'assistant');
        assert.ok(reply.usage.completion_tokens > 0 && reply.usage.completion_tokens <= 8, JSON.stringify(reply.usage));
      },
    );
    assert.equal(served.code, 0, served.stderr);
    assert.match(served.stderr, /\(.*policy, int8 base, context 64/, 'the banner names the quantized base');
  });
});
