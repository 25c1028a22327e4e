#!/usr/bin/env node
// `npm run lint` (and `npm run format`, with --write): Biome and the size check (check-code-size.mjs)
// over the project's tracked files (tracked-files.mjs), so an untracked scratch script in the folder
// does not fail them. Both run; the exit status is 1 when either found something.
//
//   node scripts/lint.mjs [--write]
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { trackedFiles } from './tracked-files.mjs';

process.chdir(fileURLToPath(new URL('..', import.meta.url))); // the project's root, where npm runs it too
const write = process.argv.includes('--write');
const biome = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');
const tracked = trackedFiles();
// Biome keeps to its own `files.includes` (biome.jsonc) among the files named; a file type it does not know is skipped.
const targets = tracked === undefined ? ['.'] : ['--files-ignore-unknown=true', '--no-errors-on-unmatched', ...tracked];
const biomeRun = spawnSync(process.execPath, [biome, 'check', ...(write ? ['--write'] : []), ...targets], {
  stdio: 'inherit',
});
const sizeRun = spawnSync(process.execPath, [fileURLToPath(new URL('./check-code-size.mjs', import.meta.url))], {
  stdio: 'inherit',
});
process.exit(biomeRun.status === 0 && sizeRun.status === 0 ? 0 : 1);
