/**
 * Every script in examples/ runs as written (issue 14, point 13), with the command its header gives
 * (`npx tsx examples/<name>.ts`), on the default policy (a tiny random built-in model: no
 * OPENAI_BASE_URL, no AGENTRL_CHECKPOINT). The scripts' replies are noise; what is checked is that
 * they run to the end and print their result. The snippets of README.md and docs/ are run by
 * scripts/docs-snippets.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repository = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const tsxLoader = import.meta.resolve('tsx');

/** Runs a TypeScript file with node + tsx (what `npx tsx file` does) in `cwd`; kills it after `limitMs`. */
function runTypeScript(
  file: string,
  args: string[],
  cwd: string,
  limitMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }> {
  const { OPENAI_BASE_URL: _url, AGENTRL_CHECKPOINT: _checkpoint, NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const child = spawn(process.execPath, ['--import', tsxLoader, file, ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, limitMs);
  return new Promise((done) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, killed });
    }),
  );
}

/** The label each script prints first, and the arguments its header documents. */
const scripts: Array<{ name: string; args: string[]; label: RegExp }> = [
  { name: 'react', args: [], label: /^ReAct on / },
  { name: 'tool-calling', args: [], label: /^tool calling on / },
  { name: 'reflexion', args: [], label: /^Reflexion on / },
  { name: 'tree-of-thoughts', args: [], label: /^Tree of Thoughts \(bfs\) on / },
  { name: 'tree-of-thoughts', args: ['dfs'], label: /^Tree of Thoughts \(dfs\) on / },
  { name: 'mcts', args: [], label: /^MCTS \(RAP\) on / },
  { name: 'memgpt', args: [], label: /^MemGPT on / },
  { name: 'toolformer', args: [], label: /^Toolformer on / },
  { name: 'gateway-ai-sdk', args: [], label: /^gateway \+ AI SDK agent trained by GRPO on / },
  { name: 'grpo-from-scratch', args: [], label: /^GRPO from scratch on bandit with / },
];

describe('examples/ run as written (npx tsx examples/<name>.ts)', () => {
  let cwd: string;
  before(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'agentrl-examples-'));
  });
  after(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  test('every script in examples/ is run here', async () => {
    const runnable = (await readdir(join(repository, 'examples'))).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && file !== 'policy.ts',
    );
    assert.deepEqual([...new Set(scripts.map((script) => `${script.name}.ts`))].sort(), runnable.sort());
  });

  for (const { name, args, label } of scripts) {
    test(`${[`examples/${name}.ts`, ...args].join(' ')}`, async () => {
      const result = await runTypeScript(join(repository, 'examples', `${name}.ts`), args, cwd, 120_000);
      assert.equal(result.killed, false, `still running after 120 s:\n${result.stdout.slice(-2000)}`);
      assert.equal(result.code, 0, `exit ${result.code}\n${result.stderr.slice(-2000)}`);
      assert.match(result.stdout, label);
      assert.match(result.stdout, /a tiny random built-in model/);
      assert.ok(result.stdout.trim().split('\n').length >= 2, 'prints its result');
    });
  }
});
