import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { markdownSnippets, shellCommands, withoutComment } from './markdown-snippets.ts';
import { planSnippet } from './snippet-plan.ts';
import { withBudget } from './snippet-runners.ts';

const page = [
  '# A page',
  '```bash',
  '# a comment line',
  'npx agentrl train --env bandit \\',
  '  --seed 3          # the seed',
  'curl -d \'{"a": "#1"}\' http://127.0.0.1:1/x   # quoted # kept',
  "cat > a.yaml <<'YAML'",
  'env: bandit   # yaml comment kept',
  'YAML',
  '```',
  '```',
  'agentrl envs',
  'iter 1: success 50%',
  '```',
  '```python',
  'print(1)',
  '```',
  '```ts',
  "import { rollout } from 'agentrl';",
  '```',
].join('\n');

describe('markdownSnippets', () => {
  const snippets = markdownSnippets('page.md', page);

  test('a bash block gives one snippet per command: continuations joined, comments dropped, heredocs whole', () => {
    const shell = snippets.filter((snippet) => snippet.block === 0);
    assert.deepEqual(
      shell.map(({ line, text }) => ({ line, text })),
      [
        { line: 4, text: 'npx agentrl train --env bandit --seed 3' },
        { line: 6, text: 'curl -d \'{"a": "#1"}\' http://127.0.0.1:1/x' },
        { line: 7, text: "cat > a.yaml <<'YAML'\nenv: bandit   # yaml comment kept\nYAML" },
      ],
    );
  });

  test('an unlabelled block gives its command lines only; other languages are kept whole', () => {
    assert.deepEqual(
      snippets.filter((snippet) => snippet.block > 0).map(({ kind, text }) => ({ kind, text })),
      [
        { kind: 'shell', text: 'agentrl envs' },
        { kind: 'other', text: 'print(1)' },
        { kind: 'typescript', text: "import { rollout } from 'agentrl';\n" },
      ],
    );
  });

  test('a comment is cut only after whitespace and outside quotes', () => {
    assert.equal(withoutComment('a#b  # c'), 'a#b');
    assert.equal(withoutComment('echo "x # y" # z'), 'echo "x # y"');
    assert.deepEqual(shellCommands(['', '  # only a comment', ''], 1), []);
  });
});

describe('planSnippet', () => {
  const snippet = (kind: 'typescript' | 'shell' | 'other', text: string) =>
    ({ page: 'README.md', line: 1, kind, language: '', block: 0, text }) as const;

  test('a new shell command or other block is unclassified (the test fails until it is run or skipped)', () => {
    assert.equal(planSnippet(snippet('shell', 'npx agentrl frobnicate --all')).action, 'unclassified');
    assert.equal(planSnippet(snippet('other', 'SELECT 1;')).action, 'unclassified');
  });

  test('a new TypeScript snippet runs; a listed one is skipped with its reason', () => {
    assert.equal(planSnippet(snippet('typescript', "import { rollout } from 'agentrl';")).action, 'typescript');
    assert.deepEqual(planSnippet(snippet('typescript', "const pool = await RemoteEnvPool.connect(['http://x']);")), {
      action: 'skip',
      reason: 'OpenEnv servers at 10.0.0.2 / 10.0.0.3 and a policy',
    });
  });
});

test('withBudget replaces the value of a flag the command has and adds the others', () => {
  assert.equal(
    withBudget('agentrl train --resume 1 --iterations 40', { '--iterations': '4', '--seed': '1' }),
    'agentrl train --resume 1 --iterations 4 --seed 1',
  );
  assert.equal(withBudget('agentrl sft --steps=300', { '--steps': '4' }), 'agentrl sft --steps=4');
});
