/**
 * `npm test`'s runner never hangs: it stops at once, naming the missing piece and its install
 * command, when Chromium is not usable; and a test file that leaves a server open still ends.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

/** Runs scripts/run-tests.mjs; kills it after `limitMs` (a hang) and says so. */
function runTests(
  args: string[],
  env: NodeJS.ProcessEnv,
  limitMs: number,
): Promise<{ code: number | null; output: string; hung: boolean; ms: number }> {
  const started = performance.now();
  // NODE_TEST_CONTEXT would make the inner runner skip its files (a test runner inside a test file).
  const { NODE_TEST_CONTEXT: _context, ...outer } = process.env;
  const child = spawn(process.execPath, ['scripts/run-tests.mjs', ...args], {
    env: { ...outer, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, limitMs);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, hung, ms: performance.now() - started });
    }),
  );
}

test('without a usable Chromium the browser tests are not run: one message names it and the install command, exit 1, at once', async () => {
  const result = await runTests(
    ['src/dashboard/dashboard.test.ts'],
    { AGENTRL_CHROMIUM: '/nonexistent/chromium' },
    60_000,
  );
  assert.equal(result.hung, false, `run-tests hung:\n${result.output}`);
  assert.equal(result.code, 1);
  assert.match(result.output, /src\/dashboard\/dashboard\.test\.ts need Chromium/);
  assert.match(result.output, /Chromium could not be started from \/nonexistent\/chromium/);
  assert.match(result.output, /apt-get install -y chromium/);
  assert.doesNotMatch(result.output, /# tests/, 'no test ran');
});

test('a test file that leaves a server open still ends (tests pass, exit 0)', async () => {
  const result = await runTests(['scripts/fixtures/open-server.test.ts'], {}, 60_000);
  assert.equal(result.hung, false, `run-tests hung:\n${result.output}`);
  assert.equal(result.code, 0, result.output);
  assert.match(result.output, /✔ leaves a server open/);
});
