/**
 * Every documented example runs as written (issue 14, point 13):
 * - each script in examples/ with the command its header gives (`npx tsx examples/<name>.ts`), on
 *   the default policy (a tiny random built-in model: no OPENAI_BASE_URL, no AGENTRL_CHECKPOINT);
 * - each TypeScript snippet of README.md, read from the README at test time and run as a module
 *   that imports 'agentrl' (the package's self-reference), unless it is listed in
 *   `needsOutsideServices` with the reason. A new snippet is run unless it is listed there.
 * The scripts' replies are noise; what is checked is that they run to the end and print their result.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { at } from '../src/core/indexing.ts';

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

/**
 * README snippets that cannot run here as written: they address servers or tools the reader
 * brings. Keyed by a string the snippet contains.
 */
const needsOutsideServices = new Map([
  ['connectMcp(', "the reader's MCP server (my-server.js)"],
  ['RemoteEnvPool.connect(', 'OpenEnv servers at 10.0.0.2 / 10.0.0.3 and a policy'],
  ['new OpenAI(', 'agentrl serve-policy listening on 127.0.0.1:8001'],
  ['new OpenAIPolicy(', "an OpenAI-compatible server on 127.0.0.1:8000 and the reader's tools (search, submit)"],
  ['startGateway(', "the reader's policy, reference, agent and reward function"],
]);

/** The ```ts blocks of a markdown text, in order. */
function typeScriptBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => at(match, 1));
}

describe('README.md TypeScript snippets run as written', async () => {
  const blocks = typeScriptBlocks(await readFile(join(repository, 'README.md'), 'utf8'));
  const scratch = join(repository, 'scratch', `readme-snippets-${process.pid}`); // inside the package, so 'agentrl' resolves to it
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  test('the README has TypeScript snippets, the Quick tour rollout among the runnable ones', () => {
    const runnable = blocks.filter((block) => ![...needsOutsideServices.keys()].some((key) => block.includes(key)));
    assert.ok(
      runnable.some((block) => block.includes('rollout(') && block.includes('TransformerModel.create(')),
      'the Quick tour snippet is run',
    );
  });

  blocks.forEach((block, index) => {
    const reason = [...needsOutsideServices].find(([key]) => block.includes(key))?.[1];
    const title = `snippet ${index + 1}: ${
      block
        .split('\n')
        .find((line) => line.startsWith('import'))
        ?.slice(0, 90) ?? block.split('\n')[0]
    }`;
    test(title, { skip: reason === undefined ? false : `needs ${reason}` }, async () => {
      await mkdir(scratch, { recursive: true });
      const file = join(scratch, `snippet-${index + 1}.ts`);
      await writeFile(file, block);
      const result = await runTypeScript(file, [], scratch, 150_000);
      assert.equal(result.killed, false, 'still running after 150 s');
      assert.equal(result.code, 0, `README snippet ${index + 1} failed:\n${block}\n${result.stderr.slice(-2000)}`);
      assert.doesNotMatch(result.stderr, /Warning/, 'no warning (e.g. AGENTRL_PROMPT_TOO_LONG)');
    });
  });
});
