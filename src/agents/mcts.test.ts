import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { runMcts, uct, type MctsNode, type MctsProblem } from './mcts.ts';
import { at } from '../core/indexing.ts';

const counterValue = (state: string): number => Number(/n = (-?\d+)/.exec(state)![1]);

/** Reach n = 10 from n = 1 with +1, *2, +3; the scripted policy proposes the actions and predicts the states. */
function numberPolicy(): ScriptedPolicy {
  return new ScriptedPolicy({
    reply: ({ messages }) => {
      const prompt = at(messages, messages.length - 1).content;
      const n = counterValue(prompt);
      if (prompt.includes('possible next actions')) return n === 5 ? '' : '1. +1\n2. *2\n3. +3\n4. +3';
      const action = at(/Action: (.*)/.exec(prompt) ?? [], 1);
      if (n === 2 && action === '+3') return '   ';
      const next = action === '*2' ? n * 2 : n + Number(action.slice(1));
      return `n = ${next}`;
    },
  });
}

const problem: MctsProblem = {
  initialState: 'n = 1',
  maxDepth: 4,
  isTerminal: (state) => counterValue(state) >= 10,
  isGoal: (state) => counterValue(state) === 10,
  reward: ({ nextState }) => -Math.abs(10 - counterValue(nextState)) / 10 + (counterValue(nextState) === 10 ? 1 : 0),
};

function allNodes(root: MctsNode): MctsNode[] {
  return [root, ...root.children.flatMap(allNodes)];
}

describe('MCTS, RAP-style (scripted policy as proposer and world model)', () => {
  test('UCT is Q + w·√(ln N(s) / N(c)); an unvisited child comes first', () => {
    assert.equal(uct({ q: 0.5, visits: 2 }, 8, 1), 0.5 + Math.sqrt(Math.log(8) / 2));
    assert.equal(uct({ q: 0.5, visits: 2 }, 8, 0), 0.5);
    assert.equal(uct({ q: -3, visits: 0 }, 8, 1), Infinity);
  });

  test('finds a path to the goal; visits and Q are consistent with back-propagated returns', async () => {
    const result = await runMcts({ policy: numberPolicy(), problem, iterations: 12, explorationWeight: 1 });
    assert.equal(result.solved, true);
    assert.equal(counterValue(result.state), 10);
    assert.deepEqual(result.path.map((node) => node.state)[0], 'n = 1');
    assert.ok(result.path.length - 1 <= problem.maxDepth);
    const { root } = result;
    assert.equal(root.visits, 12);
    assert.equal(
      root.children.reduce((sum, child) => sum + child.visits, 0),
      12,
      'every iteration passes through one child of the root',
    );
    assert.deepEqual(
      root.children.map((child) => child.action),
      ['+1', '*2', '+3'],
      'a repeated proposal is kept once',
    );
    for (const node of allNodes(root)) {
      assert.equal(node.returns.length, node.visits);
      if (node.visits > 0)
        assert.ok(
          Math.abs(node.q - node.returns.reduce((a, b) => a + b, 0) / node.visits) < 1e-12,
          `node ${node.id}: Q is the mean return`,
        );
      // G = r + G_next (γ = 1): a node's returns add up to its reward per visit plus its children's returns.
      const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
      const expected =
        (node.parent === null ? 0 : node.visits * node.reward) + sum(node.children.map((child) => sum(child.returns)));
      assert.ok(
        Math.abs(sum(node.returns) - expected) < 1e-9,
        `node ${node.id}: returns ${sum(node.returns)} vs ${expected}`,
      );
    }
    const leafPath = at(result.path, result.path.length - 1);
    assert.ok(Math.abs(leafPath.q - leafPath.reward) < 1e-12, 'at a terminal node the return is its own reward');
  });

  test('malformed model output: an empty prediction drops the action, an empty proposal list makes a dead end', async () => {
    const result = await runMcts({ policy: numberPolicy(), problem, iterations: 30, explorationWeight: 2 });
    const nodes = allNodes(result.root);
    const two = nodes.filter((node) => counterValue(node.state) === 2 && node.expanded);
    assert.ok(two.length > 0, 'a state n = 2 was expanded');
    for (const node of two)
      assert.deepEqual(
        node.children.map((child) => child.action),
        ['+1', '*2'],
      );
    const fives = nodes.filter(
      (node) => counterValue(node.state) === 5 && node.expanded && node.depth < problem.maxDepth,
    );
    assert.ok(fives.length > 0, 'a state n = 5 was expanded');
    for (const node of fives) assert.equal(node.children.length, 0);
    assert.equal(result.solved, true);
  });

  test('budget exhaustion: too shallow a search does not reach the goal; max aggregation keeps the best return', async () => {
    const shallow = await runMcts({
      policy: numberPolicy(),
      problem: { ...problem, maxDepth: 2 },
      iterations: 6,
      aggregate: 'max',
    });
    assert.equal(shallow.solved, false);
    assert.ok(shallow.path.length <= 3);
    for (const node of allNodes(shallow.root)) if (node.visits > 0) assert.equal(node.q, Math.max(...node.returns));
    await assert.rejects(runMcts({ policy: numberPolicy(), problem, iterations: 0 }), InvalidArgumentError);
  });
});
