/**
 * `npm test`'s runner sets up what the tests need and never hangs: run as root with apt-get, it
 * installs a missing system package, then runs the tests; otherwise it stops at once, naming the
 * missing piece and its install command; and a test file that leaves a server open still ends.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

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

const scratch = mkdtempSync(join(tmpdir(), 'run-tests-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test('run as root with apt-get, a missing system package (procps) is installed, then the tests run', {
  skip: process.getuid?.() !== 0 && 'installing needs root',
}, async () => {
  // PATH holds only this folder: no pgrep yet, and an apt-get that records its calls and "installs"
  // procps by linking the system's pgrep and pkill here (the real apt-get would change the machine).
  const bin = mkdtempSync(join(scratch, 'bin-'));
  const calls = join(bin, 'apt-get-calls.txt');
  writeFileSync(
    join(bin, 'apt-get'),
    `#!/bin/sh\necho "$*" >> ${calls}\n` +
      `if [ "$1" = install ]; then /bin/ln -s /usr/bin/pgrep ${bin}/pgrep; /bin/ln -s /usr/bin/pkill ${bin}/pkill; fi\n`,
  );
  chmodSync(join(bin, 'apt-get'), 0o755);
  const result = await runTests(['scripts/fixtures/finds-processes.test.ts'], { PATH: bin }, 120_000);
  assert.equal(result.hung, false, `run-tests hung:\n${result.output}`);
  assert.match(result.output, /setting up what the tests need: apt-get install -y procps/);
  assert.deepEqual(readFileSync(calls, 'utf8').trim().split('\n'), ['update', 'install -y procps']);
  assert.equal(result.code, 0, result.output);
  assert.match(result.output, /✔ finds its own process with pgrep/);
});

test('without apt-get, a missing system package stops the run at once, naming the package and the command', async () => {
  const empty = mkdtempSync(join(scratch, 'empty-'));
  const result = await runTests(['scripts/fixtures/finds-processes.test.ts'], { PATH: empty }, 60_000);
  assert.equal(result.hung, false, `run-tests hung:\n${result.output}`);
  assert.equal(result.code, 1);
  assert.match(
    result.output,
    /scripts\/fixtures\/finds-processes\.test\.ts need pgrep and pkill, and it is not usable/,
  );
  assert.match(result.output, /pgrep and pkill not found on PATH/);
  assert.match(result.output, /on Debian: apt-get install -y procps/);
  assert.doesNotMatch(result.output, /# tests/, 'no test ran');
});
