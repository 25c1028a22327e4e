/**
 * Every command and snippet of README.md and docs/ runs as written (issue 30, point 2), read from
 * the pages at test time:
 * - each TypeScript block as a module beside the package (so `import … from 'agentrl'` resolves
 *   through package.json's self-reference), with node + tsx;
 * - a guide's files at the paths the guide gives (in a scratch tree linked to the checkout), its
 *   test files through node's test runner;
 * - each shell command with a recipe in docs-snippets/snippet-plan.ts: `npx agentrl` / `agentrl`
 *   is this checkout's bin/agentrl.js, tiny budget flags are added, each block runs in a fresh
 *   folder of its own (HOME and the model cache inside it), servers until they answer and then
 *   SIGINT, a `curl` line while the server above it runs.
 * What cannot run here (a hosted key, a GPU, a Python venv, the network, the reader's own server)
 * is listed with its reason; a snippet neither run nor listed fails the first test.
 */
import assert from 'node:assert/strict';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { placeInOverlay } from './docs-snippets/guide-overlay.ts';
import { markdownSnippets, type Snippet } from './docs-snippets/markdown-snippets.ts';
import { type Placement, planSnippet, type ShellRecipe, staleEntries } from './docs-snippets/snippet-plan.ts';
import {
  type Finished,
  freePort,
  type RunningServer,
  repository,
  runShell,
  runTypeScript,
  snippetEnvironment,
  startServer,
  withBudget,
} from './docs-snippets/snippet-runners.ts';

const pages = [
  'README.md',
  ...(await readdir(join(repository, 'docs'), { recursive: true }))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => join('docs', file)),
];
const snippets = (
  await Promise.all(pages.map(async (page) => markdownSnippets(page, await readFile(join(repository, page), 'utf8'))))
).flat();
const scratch = join(repository, 'scratch', `docs-snippets-${process.pid}`); // inside the package: 'agentrl' resolves
after(() => rm(scratch, { recursive: true, force: true }));

const where = (snippet: Snippet) => `${snippet.page}:${snippet.line}`;
const headline = (snippet: Snippet) =>
  (snippet.text.split('\n').find((line) => /^(import|export|const)/.test(line)) ?? snippet.text.split('\n')[0] ?? '')
    .slice(0, 100)
    .trim();

function assertFinished(result: Finished, label: string, expectedCode = 0): void {
  assert.equal(result.timedOut, false, `${label}: still running at its time limit\n${result.output.slice(-3000)}`);
  assert.equal(
    result.code,
    expectedCode,
    `${label}: exit ${result.code ?? result.signal}\n${result.output.slice(-3000)}`,
  );
}

test('every snippet of README.md and docs/ is run here or skipped with its reason', (context) => {
  context.diagnostic('skipped snippets | page:line | snippet | needs');
  for (const snippet of snippets) {
    const plan = planSnippet(snippet);
    if (plan.action === 'skip') context.diagnostic(`| ${where(snippet)} | ${headline(snippet)} | ${plan.reason} |`);
  }
  const unclassified = snippets.filter((snippet) => planSnippet(snippet).action === 'unclassified');
  assert.deepEqual(
    unclassified.map((snippet) => `${where(snippet)} ${snippet.text}`),
    [],
    'snippets neither run nor listed as skipped (scripts/docs-snippets/snippet-plan.ts)',
  );
  assert.deepEqual(staleEntries(snippets), [], 'plan entries that match no snippet');
  const run = snippets.filter((snippet) => !['skip', 'unclassified'].includes(planSnippet(snippet).action));
  assert.ok(run.some((snippet) => snippet.page === 'README.md' && snippet.text.includes('rollout(')));
  assert.ok(
    run.some((snippet) => snippet.text.includes('dpo --env frozen-lake')),
    'the quick tour runs',
  );
});

describe('TypeScript snippets run as written', () => {
  for (const snippet of snippets.filter((each) => planSnippet(each).action === 'typescript')) {
    test(`${where(snippet)} ${headline(snippet)}`, async () => {
      const folder = join(scratch, `${snippet.page.replaceAll('/', '-')}-${snippet.line}`);
      await mkdir(folder, { recursive: true });
      const file = join(folder, 'snippet.ts');
      await writeFile(file, snippet.text);
      const env = await snippetEnvironment(folder);
      const result = await runTypeScript(file, { cwd: folder, env, limitMs: 150_000 });
      assertFinished(result, `${where(snippet)}\n${snippet.text}`);
      assert.doesNotMatch(result.output, /Warning/, 'no warning (e.g. AGENTRL_PROMPT_TOO_LONG)');
    });
  }
});

const placed = snippets.flatMap((snippet) => {
  const plan = planSnippet(snippet);
  return plan.action === 'place' ? [{ snippet, placement: plan.placement }] : [];
});
for (const page of [...new Set(placed.map(({ snippet }) => snippet.page))]) {
  test(`${page}: its files, placed where it says, load and pass their tests`, async () => {
    const root = join(scratch, page.replaceAll('/', '-'));
    const files: Array<{ file: string; placement: Placement }> = [];
    for (const { snippet, placement } of placed.filter((each) => each.snippet.page === page)) {
      files.push({ file: await placeInOverlay(root, placement.path, snippet.text), placement });
    }
    const tests = files.filter(({ placement }) => placement.test === true);
    const env = await snippetEnvironment(root);
    for (const { file, placement } of tests.length > 0 ? tests : files) {
      const result = await runTypeScript(file, { cwd: root, env, limitMs: 150_000, test: placement.test });
      assertFinished(result, `${page} → ${placement.path}`);
      if (placement.test === true) assert.match(result.output, /^# pass [1-9]/m, `${placement.path}: tests ran`);
    }
  });
}

/** `snippet` as it runs here: `agentrl` on PATH, the budget flags, free ports, a session name. */
function runnableCommand(text: string, budget: ShellRecipe['budget'], ports: ReadonlyMap<string, number>): string {
  let command = withBudget(text.replace(/\bnpx agentrl\b/g, 'agentrl'), budget);
  for (const [from, to] of ports) command = command.replace(new RegExp(`(--port\\s+|:)${from}\\b`, 'g'), `$1${to}`);
  return command.replaceAll('<session>', 'docs-session');
}

/** Each `--port N` of the block mapped to a port free now (the docs' ports may be taken on a shared machine). */
async function portsOf(block: ReadonlyArray<{ snippet: Snippet }>): Promise<Map<string, number>> {
  const ports = new Map<string, number>();
  for (const { snippet } of block) {
    for (const [, port = ''] of snippet.text.matchAll(/--port\s+(\d+)/g)) {
      if (!ports.has(port)) ports.set(port, await freePort());
    }
  }
  return ports;
}

const shellBlocks = new Map<string, Array<{ snippet: Snippet; recipe: ShellRecipe }>>();
for (const snippet of snippets) {
  const plan = planSnippet(snippet);
  if (plan.action !== 'shell') continue;
  const key = `${snippet.page} block ${snippet.block}`;
  shellBlocks.set(key, [...(shellBlocks.get(key) ?? []), { snippet, recipe: plan.recipe }]);
}

for (const [key, block] of shellBlocks) {
  describe(`${key}: its commands, in order, in a fresh folder`, () => {
    let folder = '';
    let env: NodeJS.ProcessEnv = {};
    let ports = new Map<string, number>();
    let server: RunningServer | undefined;
    before(async () => {
      folder = await mkdtemp(join(tmpdir(), 'agentrl-docs-'));
      env = await snippetEnvironment(folder);
      ports = await portsOf(block);
    });
    after(async () => {
      await server?.stop();
      await rm(folder, { recursive: true, force: true });
    });

    block.forEach(({ snippet, recipe }, index) => {
      test(`${where(snippet)} ${snippet.text.split('\n')[0]}`, async () => {
        const options = { cwd: folder, env, limitMs: 300_000 };
        for (const [name, text] of Object.entries(recipe.files ?? {})) await writeFile(join(folder, name), text);
        for (const setup of recipe.setup ?? []) assertFinished(await runShell(`agentrl ${setup}`, options), setup);
        let command = runnableCommand(snippet.text, recipe.budget, ports);
        if (recipe.server === true) {
          if (!/--port\s/.test(command)) command = `${command} --port ${await freePort()}`;
          const port = Number(/--port\s+(\d+)/.exec(command)?.[1]);
          server = await startServer(command, { ...options, port, limitMs: 600_000 });
          if (recipe.afterStart !== undefined) {
            const client = runnableCommand(recipe.afterStart, {}, ports);
            assertFinished(await runShell(client, options), client);
          }
        } else {
          const result = await runShell(command, { ...options, interruptWhen: recipe.interruptWhen });
          assertFinished(result, command, recipe.interruptWhen === undefined ? 0 : 130);
        }
        const next = block[index + 1]?.snippet.text;
        if (server !== undefined && next?.startsWith('curl ') !== true) {
          const stopped = await server.stop();
          server = undefined;
          assert.equal(stopped.timedOut, false);
          assert.ok(
            [0, 130].includes(stopped.code ?? -1),
            `the server's exit on SIGINT: ${stopped.code}\n${stopped.output}`,
          );
        }
        for (const file of recipe.creates ?? []) await access(join(folder, file));
      });
    });
  });
}
