#!/usr/bin/env node
// Runs every `*.test.ts` under src/ (or the paths given) with node's test runner through tsx.
// Node 20's `--test` does not expand globs, so the files are listed here.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      if (entry === 'node_modules') continue;
      collect(join(path, entry), out);
    }
  } else if (path.endsWith('.test.ts')) out.push(path);
  return out;
}

const roots = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['src'];
const files = roots.flatMap((root) => collect(root, []));
if (files.length === 0) {
  console.error(`no *.test.ts files under ${roots.join(', ')}`);
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=1', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
