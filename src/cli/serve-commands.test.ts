import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { TransformerModel } from '../model/model.ts';
import { at } from '../core/indexing.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'agentrl.js');

/** Starts `agentrl <args>`, waits for the URL it prints, runs `check`, then stops it with SIGTERM. */
async function whileServing(args: string[], check: (url: string) => Promise<void>): Promise<number | null> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /on (http:\/\/[0-9.:]+)/.exec(text);
      if (match) resolve(at(match, 1));
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${text}`)));
  });
  try {
    await check(url);
  } finally {
    child.kill('SIGTERM');
  }
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
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
  assert.equal(envCode, 0);

  const dir = await mkdtemp(join(tmpdir(), 'agentrl-cli-serve-'));
  try {
    const model = await TransformerModel.create({
      hiddenSize: 16,
      numLayers: 1,
      numHeads: 2,
      numKvHeads: 2,
      intermediateSize: 32,
      maxSeqLen: 64,
    });
    await saveCheckpoint(join(dir, 'policy'), { config: model.config, params: await model.hostParams() });
    const policyCode = await whileServing(['serve-policy', join(dir, 'policy'), '--port', '0'], async (url) => {
      const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] };
      assert.deepEqual(
        models.data.map((entry) => entry.id),
        ['policy'],
      );
    });
    assert.equal(policyCode, 0);
    const exported = spawn(process.execPath, [bin, 'export-hf', join(dir, 'policy'), '--out', join(dir, 'hf')], {
      stdio: 'ignore',
    });
    assert.equal(await new Promise((resolve) => exported.once('exit', resolve)), 0);
    assert.ok((await readdir(join(dir, 'hf'))).includes('special_tokens_map.json'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
