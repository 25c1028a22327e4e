/**
 * Monte-Carlo tree search with the policy as both reasoning agent and world model — RAP
 * (Hao et al. 2023, "Reasoning with Language Model is Planning with World Model", arXiv 2305.14992).
 * States and actions are text. Each iteration:
 *
 * 1. selection: from the root, descend by UCT, a = argmax Q(s,a) + w·√(ln N(s) / N(c(s,a)))
 *    (an unvisited child first), to a node that is not expanded yet;
 * 2. expansion: the policy proposes up to `actions` next actions for the node's state (one per
 *    line); for each, the policy as world model predicts the next state, and `reward` scores the
 *    step r(s, a);
 * 3. simulation: from there, the rollout keeps expanding and takes the child with the highest
 *    reward (RAP's default) until a terminal state or `maxDepth`;
 * 4. back-propagation: every node on the path gets the return from it onward,
 *    G = r + γ·G_next; Q(s,a) is the mean (or the max, `aggregate: 'max'`) of its returns.
 *
 * The answer follows the highest-Q child from the root. A proposal list that comes back empty
 * makes the node a dead end, and a prediction that comes back empty drops that action.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { chatFormatOf, stopTokensOf, userPrompt } from '../chat/policy-chat-format.ts';
import type { Policy } from '../policy/types.ts';
import type { AgentSampling } from './transcript.ts';

export interface MctsProblem {
  initialState: string;
  /** Steps from the root at most. */
  maxDepth: number;
  /** A goal or failure state: nothing follows it. */
  isTerminal: (state: string) => boolean;
  /** A goal state (`solved`). Default `isTerminal`. */
  isGoal?: (state: string) => boolean;
  /** r(s, a): the reward of one step. */
  reward: (step: { state: string; action: string; nextState: string; depth: number }) => number | Promise<number>;
}

export interface MctsOptions {
  policy: Policy;
  problem: MctsProblem;
  /** Default 16. */
  iterations?: number;
  /** Actions proposed per expansion at most. Default 3. */
  actions?: number;
  /** w of UCT. Default 1. */
  explorationWeight?: number;
  /** γ. Default 1. */
  discount?: number;
  /** How Q combines a node's returns. Default 'mean'. */
  aggregate?: 'mean' | 'max';
  proposePrompt?: (state: string, actions: number) => string;
  worldModelPrompt?: (state: string, action: string) => string;
  /** Default { maxNewTokens: 128, temperature: 0.7 }; each call gets the next seed. */
  sampling?: AgentSampling;
}

export interface MctsNode {
  id: number;
  state: string;
  /** The action that led here ('' at the root). */
  action: string;
  parent: MctsNode | null;
  children: MctsNode[];
  depth: number;
  /** r(parent.state, action). */
  reward: number;
  visits: number;
  returns: number[];
  /** Q(parent.state, action). */
  q: number;
  expanded: boolean;
  terminal: boolean;
}

export interface MctsResult {
  root: MctsNode;
  /** The highest-Q path from the root. */
  path: MctsNode[];
  /** The last state of `path`. */
  state: string;
  solved: boolean;
  /** Policy calls made. */
  calls: number;
  nodes: number;
}

export const defaultMctsPrompts = {
  propose: (state: string, actions: number): string =>
    `State:\n${state}\nList up to ${actions} possible next actions, one per line, nothing else.`,
  worldModel: (state: string, action: string): string =>
    `State:\n${state}\nAction: ${action}\nWhat is the state after this action? Reply with the new state only.`,
};

/** UCT score of a child: Q + w·√(ln N(parent) / N(child)); Infinity when unvisited. */
export function uct(child: Pick<MctsNode, 'q' | 'visits'>, parentVisits: number, explorationWeight: number): number {
  if (child.visits === 0) return Infinity;
  return child.q + explorationWeight * Math.sqrt(Math.log(Math.max(parentVisits, 1)) / child.visits);
}

function assertPositiveIntegers(values: Record<string, number>): void {
  for (const [name, value] of Object.entries(values)) {
    if (!Number.isInteger(value) || value < 1)
      throw new InvalidArgumentError(`${name} must be a positive integer, got ${value}`, { [name]: value });
  }
}

/** 1. selection: from the root down the expanded nodes, each step to the child with the highest UCT score. */
function selectPath(root: MctsNode, explorationWeight: number): MctsNode[] {
  const path = [root];
  let node = root;
  while (node.expanded && node.children.length > 0) {
    const parentVisits = node.visits;
    node = node.children.reduce((best, child) =>
      uct(child, parentVisits, explorationWeight) > uct(best, parentVisits, explorationWeight) ? child : best,
    );
    path.push(node);
  }
  return path;
}

/** 4. back-propagation: each node on `path` gets one more visit and the discounted return from it on. */
function backPropagate(path: readonly MctsNode[], discount: number, aggregate: 'mean' | 'max'): void {
  let future = 0;
  for (let i = path.length - 1; i >= 0; i--) {
    const step = at(path, i, 'path');
    future = (i === 0 ? 0 : step.reward) + discount * future;
    step.visits++;
    step.returns.push(future);
    step.q =
      aggregate === 'max'
        ? Math.max(...step.returns)
        : step.returns.reduce((sum, value) => sum + value, 0) / step.returns.length;
  }
}

/** The answer: from the root, each step to the visited child with the highest Q. */
function highestQPath(root: MctsNode): MctsNode[] {
  const best: MctsNode[] = [root];
  for (let node = root; node.children.some((child) => child.visits > 0); ) {
    node = node.children.filter((child) => child.visits > 0).reduce((top, child) => (child.q > top.q ? child : top));
    best.push(node);
  }
  return best;
}

export async function runMcts(options: MctsOptions): Promise<MctsResult> {
  const {
    policy,
    problem,
    iterations = 16,
    actions = 3,
    explorationWeight = 1,
    discount = 1,
    aggregate = 'mean',
  } = options;
  assertPositiveIntegers({ iterations, actions, maxDepth: problem.maxDepth });
  const sampling = options.sampling ?? { maxNewTokens: 128, temperature: 0.7 };
  const propose = options.proposePrompt ?? defaultMctsPrompts.propose;
  const predict = options.worldModelPrompt ?? defaultMctsPrompts.worldModel;
  const format = chatFormatOf(policy);
  const stopTokens = stopTokensOf(format);
  let calls = 0;
  let nodes = 0;
  const ask = async (content: string): Promise<string> => {
    const prompt = userPrompt(format, content);
    return (
      await policy.generate({ ...sampling, prompt, stopTokens, seed: (sampling.seed ?? 0) + calls++ })
    ).text.trim();
  };
  const makeNode = (state: string, action: string, parent: MctsNode | null, reward: number): MctsNode => ({
    id: nodes++,
    state,
    action,
    parent,
    children: [],
    depth: parent === null ? 0 : parent.depth + 1,
    reward,
    visits: 0,
    returns: [],
    q: 0,
    expanded: false,
    terminal: problem.isTerminal(state),
  });

  async function expand(node: MctsNode): Promise<void> {
    node.expanded = true;
    if (node.terminal || node.depth >= problem.maxDepth) return;
    const proposed = (await ask(propose(node.state, actions)))
      .split('\n')
      .map((line) => line.replace(/^\s*(?:\d+[.)]|[-*])\s*/, '').trim());
    for (const action of [...new Set(proposed.filter((line) => line !== ''))].slice(0, actions)) {
      const nextState = await ask(predict(node.state, action));
      if (nextState === '') continue;
      const reward = await problem.reward({ state: node.state, action, nextState, depth: node.depth });
      node.children.push(makeNode(nextState, action, node, reward));
    }
  }

  const root = makeNode(problem.initialState, '', null, 0);
  for (let iteration = 0; iteration < iterations; iteration++) {
    const path = selectPath(root, explorationWeight);
    // 2. expansion and 3. simulation (greedy in the step reward)
    let node = at(path, path.length - 1, 'path');
    while (!node.terminal && node.depth < problem.maxDepth) {
      if (!node.expanded) await expand(node);
      if (node.children.length === 0) break;
      node = node.children.reduce((best, child) => (child.reward > best.reward ? child : best));
      path.push(node);
    }
    backPropagate(path, discount, aggregate);
  }

  const best = highestQPath(root);
  const last = at(best, best.length - 1, 'best path');
  return {
    root,
    path: best,
    state: last.state,
    solved: (problem.isGoal ?? problem.isTerminal)(last.state),
    calls,
    nodes,
  };
}
