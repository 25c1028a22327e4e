#!/usr/bin/env node
// Runs every `*.test.ts` under src/, examples/ and scripts/ (or the paths given) with node's test runner
// through tsx. Node 20's `--test` does not expand globs, so the files are listed here.
//
// Before running anything it checks what the chosen tests need (today: a launchable Chromium for
// the files that drive a browser) and stops at once, naming the missing piece and the command
// that installs it. No test can hang forever: each test has a time limit (AGENTRL_TEST_TIMEOUT_MS,
// default 10 minutes), and a test file whose tests have finished is ended even if it left a
// server or child process open (--test-force-exit).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      if (entry === 'node_modules' || entry === 'fixtures') continue; // fixtures are run by the tests that use them
      collect(join(path, entry), out);
    }
  } else if (path.endsWith('.test.ts')) out.push(path);
  return out;
}

/** Launches Chromium the way the browser tests do (src/envs/browser-shop/browser.ts); the error message, or undefined when it starts. */
function chromiumProblem() {
  const probe = [
    "import { launchChromium } from './src/envs/browser-shop/browser.ts';",
    'const browser = await launchChromium();',
    'await browser.close();',
  ].join('\n');
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', probe], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.status === 0) return undefined;
  if (result.error !== undefined) return `the Chromium check did not finish (${result.error.message})`;
  const line = result.stderr.split('\n').find((text) => text.includes('Chromium could not be started'));
  return (
    line?.replace(/^.*?(Chromium could not be started)/, '$1') ?? result.stderr.trim().split('\n').slice(-3).join('\n')
  );
}

const roots = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['src', 'examples', 'scripts'];
const files = roots.flatMap((root) => collect(root, []));
if (files.length === 0) {
  console.error(`no *.test.ts files under ${roots.join(', ')}`);
  process.exit(1);
}

/** Whether `file` reaches the browser launcher through its relative imports (a fixture may hold the launch). */
const browserLauncher = join('src', 'envs', 'browser-shop', 'browser.ts');
const reachesBrowser = new Map();
function drivesBrowser(file) {
  const known = reachesBrowser.get(file);
  if (known !== undefined) return known;
  reachesBrowser.set(file, false); // an import cycle reaches nothing new
  let found = file === browserLauncher;
  if (!found) {
    for (const [, target] of readFileSync(file, 'utf8').matchAll(/from\s+'(\.{1,2}\/[^']+\.ts)'/g)) {
      if (drivesBrowser(join(dirname(file), target))) {
        found = true;
        break;
      }
    }
  }
  reachesBrowser.set(file, found);
  return found;
}

const browserTests = files.filter((file) => drivesBrowser(join(file)));
if (browserTests.length > 0) {
  const problem = chromiumProblem();
  if (problem !== undefined) {
    const named =
      browserTests.length > 4
        ? `${browserTests.slice(0, 3).join(', ')} and ${browserTests.length - 3} more test files`
        : browserTests.join(', ');
    console.error(`run-tests: ${named} need Chromium, and it is not usable.\n${problem}`);
    process.exit(1);
  }
}

const timeoutMs = Number(process.env.AGENTRL_TEST_TIMEOUT_MS ?? 600_000);
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    '--test-concurrency=1',
    `--test-timeout=${timeoutMs}`,
    '--test-force-exit',
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
