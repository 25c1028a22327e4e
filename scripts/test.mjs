#!/usr/bin/env node
// `npm test`: the lint (lint.mjs), the type check and the tests (run-tests.mjs), each run whatever the
// others found, so a formatting slip never hides the test results. At the end one line per step that
// failed, with what fixes it; exit 1 when any did.
//
//   npm test [-- test files or folders]      (the arguments go to run-tests.mjs)
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

process.chdir(fileURLToPath(new URL('..', import.meta.url)));
const script = (name) => fileURLToPath(new URL(name, import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const steps = [
  {
    name: 'lint',
    args: [script('./lint.mjs')],
    fix: 'npm run format fixes the formatting and the safe lint fixes; the rest (and files or functions over the size limits) is by hand',
  },
  { name: 'type check', args: [tsc, '-p', 'tsconfig.json'], fix: 'the type errors are listed above it' },
  {
    name: 'tests',
    args: [script('./run-tests.mjs'), ...process.argv.slice(2)],
    fix: 'the failing tests are listed above',
  },
];

const failed = [];
for (const step of steps) {
  console.log(`\nnpm test: ${step.name}`);
  const result = spawnSync(process.execPath, step.args, { stdio: 'inherit' });
  if (result.status !== 0) failed.push(step);
}
if (failed.length === 0) {
  console.log('\nnpm test: lint, type check and tests passed');
  process.exit(0);
}
console.error('');
for (const step of failed) console.error(`npm test: ${step.name} failed (above): ${step.fix}`);
process.exit(1);
