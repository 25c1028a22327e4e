#!/usr/bin/env node
// Runs every `*.test.ts` under src/, examples/, scripts/ and bench/ (or the paths given) with node's test runner
// through tsx. Node 20's `--test` does not expand globs, so the files are listed here.
//
// Before running anything it sets up what the chosen tests need from the system
// (test-prerequisites.mjs: Debian's Chromium, procps), installing it with apt-get when run as root,
// and otherwise stops at once, naming the missing piece and the command that installs it.
// No test can hang forever: each test has a time limit (AGENTRL_TEST_TIMEOUT_MS, default 10
// minutes), and a test file whose tests have finished is ended even if it left a server or child
// process open (--test-force-exit).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { setUpPrerequisites } from './test-prerequisites.mjs';

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      if (entry === 'node_modules' || entry === 'fixtures') continue; // fixtures are run by the tests that use them
      collect(join(path, entry), out);
    }
  } else if (path.endsWith('.test.ts')) out.push(path);
  return out;
}

const given = process.argv.slice(2);
const roots = given.length > 0 ? given : ['src', 'examples', 'scripts', 'bench'].filter((root) => existsSync(root));
const files = roots.flatMap((root) => collect(root, []));
if (files.length === 0) {
  console.error(`no *.test.ts files under ${roots.join(', ')}`);
  process.exit(1);
}

const problem = setUpPrerequisites(files);
if (problem !== undefined) {
  console.error(problem);
  process.exit(1);
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
