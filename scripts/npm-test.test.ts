/**
 * `npm test` (scripts/test.mjs) in a small git project built here with the real scripts and tools:
 * lint covers the tracked files only (an untracked scratch file with bad formatting is not the
 * project's), and a lint failure does not hide the test results — the tests still run and the
 * command exits 1 at the end, naming the lint.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const project = mkdtempSync(join(tmpdir(), 'npm-test-'));
after(() => rmSync(project, { recursive: true, force: true }));

const scripts = ['test.mjs', 'lint.mjs', 'tracked-files.mjs', 'check-code-size.mjs', 'run-tests.mjs'];
const badlyFormatted = 'export const   value=1\n';

function git(...args: string[]): void {
  const result = spawnSync('git', args, { cwd: project, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
}

before(() => {
  mkdirSync(join(project, 'scripts'));
  for (const name of [...scripts, 'test-prerequisites.mjs']) {
    copyFileSync(join(root, 'scripts', name), join(project, 'scripts', name));
  }
  symlinkSync(join(root, 'node_modules'), join(project, 'node_modules'));
  copyFileSync(join(root, 'biome.jsonc'), join(project, 'biome.jsonc'));
  copyFileSync(join(root, 'tsconfig.json'), join(project, 'tsconfig.json'));
  writeFileSync(join(project, 'package.json'), '{\n  "type": "module"\n}\n');
  writeFileSync(join(project, '.gitignore'), 'node_modules\n');
  mkdirSync(join(project, 'src'));
  writeFileSync(
    join(project, 'src', 'sum.test.ts'),
    "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\n\n" +
      "test('adds', () => {\n  assert.equal(1 + 1, 2);\n});\n",
  );
  writeFileSync(join(project, 'scratch.ts'), badlyFormatted); // the user's own, untracked
  git('init', '--quiet');
  git(
    'add',
    '.gitignore',
    'package.json',
    'tsconfig.json',
    'biome.jsonc',
    'src',
    ...scripts.map((name) => `scripts/${name}`),
  );
});

function npmTest(): { code: number | null; output: string } {
  // NODE_TEST_CONTEXT would make the inner runner skip its files (a test runner inside a test file).
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const result = spawnSync(process.execPath, ['scripts/test.mjs'], { cwd: project, env, encoding: 'utf8' });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

test('an untracked scratch file with bad formatting does not fail npm test', () => {
  const result = npmTest();
  assert.equal(result.code, 0, result.output);
  assert.match(result.output, /✔ adds/);
  assert.match(result.output, /npm test: lint, type check and tests passed/);
});

test('a tracked file with bad formatting fails npm test at the end, after the tests ran', () => {
  writeFileSync(join(project, 'src', 'value.ts'), badlyFormatted);
  git('add', 'src/value.ts');
  const result = npmTest();
  assert.equal(result.code, 1, result.output);
  assert.match(result.output, /src\/value\.ts format/);
  assert.match(result.output, /✔ adds/, 'the tests ran');
  assert.match(result.output, /ℹ pass 1/);
  assert.match(result.output, /npm test: lint failed \(above\): npm run format fixes the formatting/);
  assert.doesNotMatch(result.output, /npm test: (type check|tests) failed/);
});
