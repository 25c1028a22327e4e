import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { ScriptedPolicy, type ScriptContext } from '../policy/scripted-policy.ts';
import { parseValue, parseVote, runTreeOfThoughts, VALUES, type ThoughtProblem } from './tree-of-thoughts.ts';
import { at } from '../core/indexing.ts';

/** Spell CAT one letter per thought. */
const problem: ThoughtProblem = {
  input: 'Spell the animal CAT, one letter per step.',
  depth: 3,
  isSolution: (thoughts) => thoughts.join('') === 'CAT',
};

const stepsOf = (block: string): string[] =>
  block.trim() === '(none yet)'
    ? []
    : block
        .trim()
        .split('\n')
        .map((line) => line.replace(/^\d+\. /, ''));
const thoughtsIn = (prompt: string): string[] =>
  stepsOf(at(/Steps so far:\n([\s\S]*?)\n(?:Propose|Write|Can)/.exec(prompt) ?? [], 1));

const proposals: Record<string, string> = { '': 'K\nC\nX\nC', C: '1. A\n2. O', K: 'A\nI', CA: 'T\nR' };

/** A world where K looks as sure as C at first but leads nowhere. */
function rate(prefix: string): string {
  if (prefix === 'K' || 'CAT'.startsWith(prefix)) return 'The letters fit. sure';
  if (prefix === 'X') return 'hmm, no idea';
  return 'No animal starts like that: impossible';
}

function policy(): ScriptedPolicy {
  return new ScriptedPolicy({
    reply: ({ messages }: ScriptContext) => {
      const prompt = at(messages, messages.length - 1).content;
      if (prompt.includes('Propose up to')) return proposals[thoughtsIn(prompt).join('')] ?? 'T';
      if (prompt.includes('Can these steps')) return rate(thoughtsIn(prompt).join(''));
      throw new Error(`unexpected prompt ${prompt}`);
    },
  });
}

describe('Tree of Thoughts (scripted policy)', () => {
  test('ratings and votes parse; malformed ones count nothing', () => {
    assert.equal(parseValue('first likely, then on reflection: Sure'), VALUES.sure);
    assert.equal(parseValue('impossible'), VALUES.impossible);
    assert.equal(parseValue('no idea'), 0);
    assert.equal(parseVote('… so the best choice is 2', 3), 1);
    assert.equal(parseVote('The best choice is {3}', 3), 2);
    assert.equal(parseVote('The best choice is 4', 3), undefined);
    assert.equal(parseVote('cannot decide', 3), undefined);
  });

  test('BFS with propose + value: breadth 2 keeps the good branch and solves it; breadth 1 follows the misleading one', async () => {
    const wide = await runTreeOfThoughts({
      policy: policy(),
      problem,
      generator: { kind: 'propose', k: 5 },
      evaluator: { kind: 'value', samples: 2 },
      search: { kind: 'bfs', breadth: 2 },
    });
    assert.equal(wide.solved, true);
    assert.deepEqual(wide.best!.thoughts, ['C', 'A', 'T']);
    assert.equal(wide.best!.value, 2 * VALUES.sure);
    const first = wide.tree.filter((node) => node.parent === null);
    assert.deepEqual(
      first.map((node) => [node.thoughts[0], node.value]),
      [
        ['K', 40],
        ['C', 40],
        ['X', 0],
      ],
      'repeated proposal C kept once; X rated without a verdict = 0',
    );

    const narrow = await runTreeOfThoughts({
      policy: policy(),
      problem,
      generator: { kind: 'propose', k: 5 },
      evaluator: { kind: 'value', samples: 2 },
      search: { kind: 'bfs', breadth: 1 },
    });
    assert.equal(narrow.solved, false);
    assert.equal(narrow.best!.thoughts[0], 'K');
  });
});

describe('Tree of Thoughts (scripted policy): DFS', () => {
  test('DFS with a pruning threshold backtracks out of a dead subtree and stops at the first solution', async () => {
    const result = await runTreeOfThoughts({
      policy: policy(),
      problem,
      generator: { kind: 'propose', k: 5 },
      evaluator: { kind: 'value', samples: 1 },
      search: { kind: 'dfs', threshold: 0.5 },
    });
    assert.equal(result.stopReason, 'solution');
    assert.deepEqual(result.best!.thoughts, ['C', 'A', 'T']);
    const visited = result.tree.map((node) => `${node.thoughts.join('')}${node.pruned ? '✗' : ''}`);
    assert.deepEqual(visited, ['K', 'C', 'X✗', 'KA✗', 'KI✗', 'CA', 'CO✗', 'CAT', 'CAR✗']);

    const capped = await runTreeOfThoughts({
      policy: policy(),
      problem,
      generator: { kind: 'propose', k: 5 },
      evaluator: { kind: 'value', samples: 1 },
      search: { kind: 'dfs', threshold: 0.5, maxStates: 4 },
    });
    assert.equal(capped.stopReason, 'max-states');
    assert.equal(capped.solved, false);
    assert.deepEqual(capped.best!.thoughts, ['K'], 'the deepest best state reached');
  });
});

describe('Tree of Thoughts (scripted policy): sampled thoughts and bad settings', () => {
  test('sampled thoughts with vote evaluation (malformed votes dropped)', async () => {
    let votes = 0;
    const sampler = new ScriptedPolicy({
      reply: ({ messages, index }) => {
        const prompt = at(messages, messages.length - 1).content;
        if (prompt.includes('Write the next step only')) {
          const done = thoughtsIn(prompt).length;
          return at(
            at(
              [
                ['K', 'C', 'C'],
                ['A', 'O', 'A'],
                ['T', 'G', 'T'],
              ],
              done,
            ),
            index % 3,
          );
        }
        const choices = prompt
          .split(/Choice \d+:\n/)
          .slice(1)
          .map((block) => stepsOf(at(block.split('\nAnalyze'), 0)).join(''));
        votes++;
        if (votes % 3 === 0) return 'I cannot decide.';
        return `The best choice is ${choices.findIndex((choice) => 'CAT'.startsWith(choice)) + 1}`;
      },
    });
    const result = await runTreeOfThoughts({
      policy: sampler,
      problem,
      generator: { kind: 'sample', k: 3 },
      evaluator: { kind: 'vote', samples: 3 },
      search: { kind: 'bfs', breadth: 1 },
    });
    assert.equal(result.solved, true);
    assert.deepEqual(result.best!.thoughts, ['C', 'A', 'T']);
    assert.deepEqual(
      result.tree.filter((node) => node.parent === null).map((node) => [node.thoughts[0], node.value]),
      [
        ['K', 0],
        ['C', 2],
      ],
      'two valid votes of three',
    );
    assert.equal(result.calls, 3 * (3 + 3));
  });

  test('bad settings are rejected', async () => {
    await assert.rejects(
      runTreeOfThoughts({
        policy: policy(),
        problem,
        generator: { kind: 'propose', k: 0 },
        evaluator: { kind: 'value' },
        search: { kind: 'bfs', breadth: 1 },
      }),
      InvalidArgumentError,
    );
    await assert.rejects(
      runTreeOfThoughts({
        policy: policy(),
        problem: { ...problem, depth: 0 },
        generator: { kind: 'propose', k: 2 },
        evaluator: { kind: 'value' },
        search: { kind: 'bfs', breadth: 1 },
      }),
      /depth must be a positive integer/,
    );
  });
});
