import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCheckpoint } from '../model/checkpoint.ts';

const bin = fileURLToPath(new URL('../../bin/agentrl.js', import.meta.url));

test('agentrl train: a live progress line per iteration, and Ctrl-C leaves a usable checkpoint', async () => {
  const out = await mkdtemp(join(tmpdir(), 'agentrl-train-'));
  try {
    const child = spawn(
      process.execPath,
      [
        bin, 'train', '--env', 'bandit', '--out', out, '--seed', '1',
        '--demonstrations', '32', '--sft-steps', '20', '--hidden-size', '32', '--num-layers', '1', '--num-heads', '2',
        '--num-kv-heads', '1', '--intermediate-size', '64', '--max-seq-len', '64', '--iterations', '200',
        '--tasks-per-iteration', '4', '--group-size', '4', '--max-turns', '1', '--max-new-tokens', '24',
        '--test-episodes', '8', '--validate-every', '0', '--validation-episodes', '8', '--checkpoint-every', '0',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    let interrupted = false;
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      // After the second iteration's progress line, press Ctrl-C.
      if (!interrupted && /rl grpo \[[^\]]*\] 2\/200/.test(stderr)) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.ok(interrupted, `never reached iteration 2:\n${stderr}`);
    assert.equal(code, 0, stderr);
    assert.match(stderr, /reward [\d.]+\s+success [\d.]+\s+kl [\d.e+-]+\s+entropy [\d.e+-]+\s+gen tok\/s \d+/);
    assert.match(stderr, /Ctrl-C/);
    assert.match(stdout, /held-out test success [\d.]+% before RL → [\d.]+% after \d+ iterations/);
    const iterations = Number(/after (\d+) iterations/.exec(stdout)![1]);
    assert.ok(iterations >= 2 && iterations < 200, `${iterations} iterations before stopping`);
    const checkpoint = await loadCheckpoint(join(out, 'final'));
    assert.equal(checkpoint.config.hiddenSize, 32);
    assert.equal(checkpoint.extra?.iteration, iterations);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
