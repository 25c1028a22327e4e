#!/usr/bin/env node
// Size limits as a check (issue 19): no source file over 400 lines, no function over 80 lines.
//
//   node scripts/check-code-size.mjs [folder or file ...]     (default: src bench scripts examples)
//
// With no argument, the files git tracks under the default folders (an untracked scratch file is not
// the project's; outside a git checkout, every file there). Every .ts / .mts / .mjs / .js file counts, tests included. A function is a
// declaration, a method, a constructor, an accessor, an arrow or a function expression (so a
// describe/test callback is one); it spans from its first token to its last, comments before it not
// counted. Prints `file:line name (N lines)` for each file or function over its limit and exits 1 if
// there is any; exits 2 when a folder given does not exist.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { trackedFiles } from './tracked-files.mjs';

const maxFileLines = 400;
const maxFunctionLines = 80;
const defaultRoots = ['src', 'bench', 'scripts', 'examples'];
const sourceExtensions = ['.ts', '.mts', '.mjs', '.js'];
/** The name printed for a file over its limit (no function is named so: it has a space). */
const wholeFile = 'whole file';

/** The source files under `path` (a file or a folder), sorted; node_modules and dot-folders skipped. */
function sourceFiles(path, out = []) {
  if (!statSync(path).isDirectory()) {
    if (isSource(path)) out.push(path);
    return out;
  }
  for (const entry of readdirSync(path).sort()) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    sourceFiles(join(path, entry), out);
  }
  return out;
}

/** Lines in `text`; a final newline does not start another line. */
function lineCount(text) {
  if (text === '') return 0;
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** The name a property, method or variable is declared under, as written. */
function declaredName(nameNode, sourceFile) {
  return nameNode === undefined ? '<anonymous>' : nameNode.getText(sourceFile);
}

/** `Class.` for a member of a named class, '' otherwise. */
function classPrefix(node, sourceFile) {
  const owner = node.parent;
  return ts.isClassLike(owner) && owner.name !== undefined ? `${owner.name.getText(sourceFile)}.` : '';
}

/** `callee('first string argument')` for a callback passed to a call: `test('rejects a bad seed')`, `items.map(…)`. */
function callbackName(call, sourceFile) {
  const callee = call.expression.getText(sourceFile).replace(/\s+/g, ' ');
  const label = call.arguments[0];
  const shown = label !== undefined && ts.isStringLiteralLike(label) ? label.getText(sourceFile) : '…';
  return `${callee}(${shown}) callback`;
}

/** A readable name for a function node: its own name, or where it is assigned or passed. */
function functionName(node, sourceFile) {
  if (ts.isConstructorDeclaration(node)) return `${classPrefix(node, sourceFile)}constructor`;
  if (ts.isMethodDeclaration(node) || ts.isAccessor(node)) {
    const kind = ts.isGetAccessor(node) ? 'get ' : ts.isSetAccessor(node) ? 'set ' : '';
    return `${kind}${classPrefix(node, sourceFile)}${declaredName(node.name, sourceFile)}`;
  }
  if (node.name !== undefined) return node.name.getText(sourceFile);
  if (ts.isFunctionDeclaration(node)) return 'default';
  let parent = node.parent;
  while (ts.isParenthesizedExpression(parent) || ts.isAsExpression(parent) || ts.isSatisfiesExpression(parent)) {
    parent = parent.parent;
  }
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return declaredName(parent.name, sourceFile);
  if (ts.isPropertyDeclaration(parent))
    return `${classPrefix(parent, sourceFile)}${declaredName(parent.name, sourceFile)}`;
  if (ts.isBinaryExpression(parent)) return parent.left.getText(sourceFile);
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent)) return callbackName(parent, sourceFile);
  if (ts.isExportAssignment(parent)) return 'default';
  if (ts.isArrowFunction(parent)) return `function returned by ${functionName(parent, sourceFile)}`;
  const returner = ts.isReturnStatement(parent) ? enclosingFunction(parent) : undefined;
  if (returner !== undefined) return `function returned by ${functionName(returner, sourceFile)}`;
  return '<anonymous>';
}

/** The innermost function around `node`, if any. */
function enclosingFunction(node) {
  let parent = node.parent;
  while (parent !== undefined && !isFunctionNode(parent)) parent = parent.parent;
  return parent;
}

function isFunctionNode(node) {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isAccessor(node)
  );
}

/** The functions in `file` longer than the limit, as `{ file, line, name, lines }`. */
function longFunctions(file, text) {
  const scriptKind = file.endsWith('.ts') || file.endsWith('.mts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind);
  const found = [];
  const visit = (node) => {
    if (isFunctionNode(node) && node.body !== undefined) {
      const first = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line;
      const last = sourceFile.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > maxFunctionLines) found.push({ file, line: first + 1, name: functionName(node, sourceFile), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

/** Whether `path` is a source file the check reads. */
function isSource(path) {
  return sourceExtensions.some((extension) => path.endsWith(extension)) && !path.endsWith('.d.ts');
}

/** Every file and function over its limit in `files`, in file then line order. */
function sizeViolations(files) {
  const violations = [];
  for (const path of files) {
    const file = relative(process.cwd(), path) || path;
    const text = readFileSync(path, 'utf8');
    const lines = lineCount(text);
    if (lines > maxFileLines) violations.push({ file, line: 1, name: wholeFile, lines });
    violations.push(...longFunctions(file, text));
  }
  return { files: files.length, violations };
}

const given = process.argv.slice(2);
const missing = given.filter((root) => !existsSync(root));
if (missing.length > 0) {
  console.error(`check-code-size: no such file or folder: ${missing.join(', ')}`);
  process.exit(2);
}
const roots = given.length > 0 ? given : defaultRoots.filter((root) => existsSync(root));
const tracked = given.length > 0 ? undefined : trackedFiles(roots)?.filter(isSource);
const { files, violations } = sizeViolations(tracked ?? roots.flatMap((root) => sourceFiles(root)));
for (const { file, line, name, lines } of violations) console.log(`${file}:${line} ${name} (${lines} lines)`);
const longFiles = violations.filter((violation) => violation.name === wholeFile).length;
const count = (n, noun) => `${n} ${noun}${n === 1 ? '' : 's'}`;
const summary = `${count(longFiles, 'file')} over ${maxFileLines} lines, ${count(violations.length - longFiles, 'function')} over ${maxFunctionLines} lines`;
if (violations.length > 0) {
  console.error(`check-code-size: ${summary} (${files} files checked under ${roots.join(', ')})`);
  process.exit(1);
}
console.log(
  `check-code-size: ${files} files under ${roots.join(', ')}; none over ${maxFileLines} lines, no function over ${maxFunctionLines}`,
);
