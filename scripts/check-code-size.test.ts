/**
 * scripts/check-code-size.mjs on fixture folders written here: a file over 400 lines and every kind
 * of function over 80 lines is reported as `file:line name (N lines)` with exit 1; a function of
 * exactly 80 lines, a file of exactly 400 and the comment above a function are not counted.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./check-code-size.mjs', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'check-code-size-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs the check in `folder` on `roots`; its exit code and what it printed. */
function checkSize(folder: string, roots: string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [script, ...roots], { cwd: folder, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Writes `files` (path → text) under a new folder in the scratch folder; returns the folder. */
function fixture(name: string, files: Record<string, string>): string {
  const folder = join(scratch, name);
  for (const [path, text] of Object.entries(files)) {
    const file = join(folder, path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
  }
  return folder;
}

/** `count` lines: `open`, filler statements, `close`. */
function block(open: string, count: number, close = '}'): string[] {
  return [open, ...Array.from({ length: count - 2 }, (_, index) => `  void ${index};`), close];
}

/** Source text from pieces of lines; `at[key]` is the 1-based line where piece `key` starts. */
function source(pieces: Record<string, string[]>): { text: string; at: Record<string, number> } {
  const lines: string[] = [];
  const at: Record<string, number> = {};
  for (const [key, piece] of Object.entries(pieces)) {
    at[key] = lines.length + 1;
    lines.push(...piece);
  }
  return { text: `${lines.join('\n')}\n`, at };
}

test('every kind of function over 80 lines and a file over 400 are named with their line and length; exit 1', () => {
  const functions = source({
    comment: ['/**', ' * The comment above a function is not part of it.', ' */'],
    declaration: block('export function declared(): void {', 81),
    exactly80: block('function fits(): void {', 80),
    arrow: block('const arrow = (): void => {', 82, '};'),
    factory: ['function makeHandler() {', ...block('  return () => {', 81, '  };'), '}'],
  });
  const members = source({
    klass: ['class Box {'],
    method: block('  unpack(): void {', 81, '  }'),
    init: block('  constructor() {', 81, '  }'),
    classEnd: ['}'],
    object: ['const handlers = {'],
    property: block('  onClose: function (): void {', 81, '  },'),
    objectEnd: ['};'],
  });
  const callbacks = source({
    describe: block("describe('a suite', () => {", 90, '});'),
    mapped: block('[1].map((item) => {', 81, '});'),
  });
  const long = Array.from({ length: 401 }, (_, index) => `export const line${index} = ${index};`).join('\n');
  const folder = fixture('long', {
    'src/functions.ts': functions.text,
    'src/members.ts': members.text,
    'src/callbacks.ts': callbacks.text,
    'src/long-file.ts': `${long}\n`,
    'bench/nested/also-long.mjs': `${long}\n`,
    'src/node_modules/skipped.ts': `${long}\n`,
  });
  const result = checkSize(folder, ['src', 'bench']);
  assert.equal(result.code, 1, result.stderr);
  assert.deepEqual(result.stdout.trim().split('\n'), [
    `src/callbacks.ts:${callbacks.at.describe} describe('a suite') callback (90 lines)`,
    `src/callbacks.ts:${callbacks.at.mapped} [1].map(…) callback (81 lines)`,
    `src/functions.ts:${functions.at.declaration} declared (81 lines)`,
    `src/functions.ts:${functions.at.arrow} arrow (82 lines)`,
    `src/functions.ts:${functions.at.factory} makeHandler (83 lines)`,
    `src/functions.ts:${(functions.at.factory ?? 0) + 1} function returned by makeHandler (81 lines)`,
    'src/long-file.ts:1 whole file (401 lines)',
    `src/members.ts:${members.at.method} Box.unpack (81 lines)`,
    `src/members.ts:${members.at.init} Box.constructor (81 lines)`,
    `src/members.ts:${members.at.property} onClose (81 lines)`,
    'bench/nested/also-long.mjs:1 whole file (401 lines)',
  ]);
  assert.match(result.stderr, /2 files over 400 lines, 9 functions over 80 lines \(5 files checked under src, bench\)/);
});

test('within the limits (a file of exactly 400 lines, a function of exactly 80): one summary line, exit 0', () => {
  const fits = source({ declaration: block('export function fits(): void {', 80) });
  const full = Array.from({ length: 400 }, (_, index) => `export const line${index} = ${index};`).join('\n');
  const folder = fixture('fits', { 'scripts/fits.ts': fits.text, 'scripts/full.ts': `${full}\n` });
  const result = checkSize(folder, []);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.equal(result.stdout, 'check-code-size: 2 files under scripts; none over 400 lines, no function over 80\n');
});

test('a folder that does not exist is an error that names it (exit 2)', () => {
  const folder = fixture('empty', { 'src/empty.ts': '' });
  const result = checkSize(folder, ['src', 'no-such-folder']);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /no such file or folder: no-such-folder/);
});
