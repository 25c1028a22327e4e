/**
 * Tree of Thoughts (Yao et al. 2023, arXiv 2305.10601). A state is the input x with the thoughts
 * so far, s = [x, z₁…zᵢ]; the policy is both
 * - the thought generator G(p, s, k): k independent samples of the next thought (`sample`), or one
 *   reply proposing up to k next thoughts, one per line (`propose`);
 * - the state evaluator V(p, S): each state rated sure / likely / impossible, n samples summed with
 *   the paper's values 20 / 1 / 0.001 (`value`), or n votes for the most promising of the
 *   candidates, value = votes (`vote`);
 * and the search is
 * - BFS: keep the b best states at each of the T steps; the answer is the best final state;
 * - DFS: expand the best-valued child first, prune a child whose value is ≤ v_th, backtrack when a
 *   subtree holds no solution; stops at the first solution or after `maxStates` evaluated states.
 *
 * A rating with no sure/likely/impossible counts 0, a vote naming no valid choice is dropped, and
 * proposals repeated under one parent are kept once (values are cached per state, as in the
 * paper's code).
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { ChatFormat } from '../chat/chat-format.ts';
import { chatFormatOf, stopTokensOf, userPrompt } from '../chat/policy-chat-format.ts';
import type { Policy } from '../policy/types.ts';
import type { AgentSampling } from './transcript.ts';

export interface ThoughtProblem {
  input: string;
  /** T: thoughts to a full solution. */
  depth: number;
  /** Whether a full state solves the problem (DFS stops at the first one). Default: none does. */
  isSolution?: (thoughts: readonly string[]) => boolean;
}

type Prompt = (input: string, thoughts: readonly string[]) => string;

export type ThoughtGenerator =
  | { kind: 'sample'; k: number; prompt?: Prompt }
  | { kind: 'propose'; k: number; prompt?: (input: string, thoughts: readonly string[], k: number) => string };
export type StateEvaluator =
  | { kind: 'value'; samples?: number; prompt?: Prompt }
  | { kind: 'vote'; samples?: number; prompt?: (input: string, candidates: readonly (readonly string[])[]) => string };
export type ThoughtSearch = { kind: 'bfs'; breadth: number } | { kind: 'dfs'; threshold: number; maxStates?: number };

export interface TreeOfThoughtsOptions {
  policy: Policy;
  problem: ThoughtProblem;
  generator: ThoughtGenerator;
  evaluator: StateEvaluator;
  search: ThoughtSearch;
  /** Sampling of every call. Default { maxNewTokens: 256, temperature: 0.7 }; each call gets the next seed. */
  sampling?: AgentSampling;
}

export interface ThoughtNode {
  id: number;
  parent: number | null;
  thoughts: string[];
  value: number;
  /** DFS: the value was ≤ v_th and the subtree was not explored. */
  pruned: boolean;
}

export interface TreeOfThoughtsResult {
  /** The best full state found (BFS), or the solution / deepest best state (DFS). */
  best: ThoughtNode | undefined;
  solved: boolean;
  /** Every evaluated state, in order. */
  tree: ThoughtNode[];
  stopReason: 'done' | 'solution' | 'max-states';
  /** Policy calls made. */
  calls: number;
}

export const VALUES: Readonly<Record<'sure' | 'likely' | 'impossible', number>> = {
  sure: 20,
  likely: 1,
  impossible: 0.001,
};

const steps = (thoughts: readonly string[]): string =>
  thoughts.length === 0 ? '(none yet)' : thoughts.map((thought, i) => `${i + 1}. ${thought}`).join('\n');

export const defaultPrompts = {
  sample: (input: string, thoughts: readonly string[]): string =>
    `Input: ${input}\nSteps so far:\n${steps(thoughts)}\nWrite the next step only.`,
  propose: (input: string, thoughts: readonly string[], k: number): string =>
    `Input: ${input}\nSteps so far:\n${steps(thoughts)}\nPropose up to ${k} possible next steps, one per line, nothing else.`,
  value: (input: string, thoughts: readonly string[]): string =>
    `Input: ${input}\nSteps so far:\n${steps(thoughts)}\nCan these steps still reach a correct solution? Reason briefly, then end with one word: sure, likely or impossible.`,
  vote: (input: string, candidates: readonly (readonly string[])[]): string =>
    [
      `Input: ${input}`,
      'Which choice is most promising?',
      ...candidates.map((thoughts, i) => `Choice ${i + 1}:\n${steps(thoughts)}`),
      'Analyze each choice, then end with "The best choice is {s}", where s is the number of the choice.',
    ].join('\n'),
};

/** The last sure / likely / impossible in a rating, as its value; 0 when there is none. */
export function parseValue(text: string): number {
  const words = [...text.toLowerCase().matchAll(/\b(sure|likely|impossible)\b/g)];
  const last = words.at(-1)?.[1] as keyof typeof VALUES | undefined;
  return last === undefined ? 0 : VALUES[last];
}

/** The 0-based choice of a vote, or undefined. */
export function parseVote(text: string, choices: number): number | undefined {
  const match = /best choice is\s*\{?(\d+)/i.exec(text);
  const choice = match === null ? NaN : Number(match[1]) - 1;
  return Number.isInteger(choice) && choice >= 0 && choice < choices ? choice : undefined;
}

export async function runTreeOfThoughts(options: TreeOfThoughtsOptions): Promise<TreeOfThoughtsResult> {
  checkOptions(options);
  const tree = new ThoughtTree(options);
  const root: ThoughtNode = { id: -1, parent: null, thoughts: [], value: 0, pruned: false };
  return options.search.kind === 'bfs'
    ? breadthFirst(tree, root, options.search)
    : depthFirst(tree, root, options.search);
}

const byValue = (a: ThoughtNode, b: ThoughtNode): number => b.value - a.value || a.id - b.id;

/** BFS: keep the b best states at each of the T steps; the answer is the best final state. */
async function breadthFirst(
  tree: ThoughtTree,
  root: ThoughtNode,
  search: { breadth: number },
): Promise<TreeOfThoughtsResult> {
  let frontier = [root];
  for (let t = 0; t < tree.problem.depth && frontier.length > 0; t++) {
    const next: ThoughtNode[] = [];
    for (const state of frontier) next.push(...(await tree.expand(state)));
    frontier = next.sort(byValue).slice(0, search.breadth);
  }
  const best = frontier[0];
  return {
    ...(best === undefined ? { best: undefined } : { best }),
    solved: best !== undefined && tree.solves(best),
    tree: tree.nodes,
    stopReason: 'done',
    calls: tree.calls,
  };
}

/** DFS: best-valued child first, children valued ≤ v_th pruned, backtracking; stops at the first solution or `maxStates`. */
async function depthFirst(
  tree: ThoughtTree,
  root: ThoughtNode,
  search: { threshold: number; maxStates?: number },
): Promise<TreeOfThoughtsResult> {
  const { threshold, maxStates = 100 } = search;
  let deepest: ThoughtNode | undefined;
  let stopReason: TreeOfThoughtsResult['stopReason'] = 'done';
  const deeper = (child: ThoughtNode): boolean =>
    deepest === undefined ||
    child.thoughts.length > deepest.thoughts.length ||
    (child.thoughts.length === deepest.thoughts.length && child.value > deepest.value);
  async function dfs(state: ThoughtNode): Promise<ThoughtNode | undefined> {
    if (state.thoughts.length === tree.problem.depth) return tree.solves(state) ? state : undefined;
    if (tree.nodes.length >= maxStates) {
      stopReason = 'max-states';
      return undefined;
    }
    const candidates = (await tree.expand(state)).sort(byValue);
    for (const child of candidates) child.pruned = child.value <= threshold;
    for (const child of candidates.filter((candidate) => !candidate.pruned)) {
      if (deeper(child)) deepest = child;
      const found = await dfs(child);
      if (found !== undefined || stopReason === 'max-states') return found;
    }
    return undefined;
  }
  const solution = await dfs(root);
  if (solution !== undefined)
    return { best: solution, solved: true, tree: tree.nodes, stopReason: 'solution', calls: tree.calls };
  return {
    ...(deepest === undefined ? { best: undefined } : { best: deepest }),
    solved: false,
    tree: tree.nodes,
    stopReason,
    calls: tree.calls,
  };
}

/** The evaluated states so far, and the policy as thought generator G and state evaluator V. */
class ThoughtTree {
  readonly problem: ThoughtProblem;
  /** Every evaluated state, in order. */
  readonly nodes: ThoughtNode[] = [];
  /** Policy calls made. */
  calls = 0;
  private readonly options: TreeOfThoughtsOptions;
  private readonly sampling: AgentSampling;
  private readonly format: ChatFormat;
  private readonly valueCache = new Map<string, number>();

  constructor(options: TreeOfThoughtsOptions) {
    this.options = options;
    this.problem = options.problem;
    this.sampling = options.sampling ?? { maxNewTokens: 256, temperature: 0.7 };
    this.format = chatFormatOf(options.policy);
  }

  solves(node: ThoughtNode): boolean {
    return node.thoughts.length === this.problem.depth && this.problem.isSolution?.(node.thoughts) === true;
  }

  /** The children of `state`, generated and evaluated (added to `nodes`). */
  async expand(state: ThoughtNode): Promise<ThoughtNode[]> {
    const states = await this.children(state);
    const values =
      this.options.evaluator.kind === 'value'
        ? await this.rate(states, this.options.evaluator)
        : await this.vote(states, this.options.evaluator);
    const parent = state.id < 0 ? null : state.id;
    return states.map((thoughts, i) => {
      const node: ThoughtNode = {
        id: this.nodes.length,
        parent,
        thoughts,
        value: at(values, i, 'values'),
        pruned: false,
      };
      this.nodes.push(node);
      return node;
    });
  }

  private async ask(content: string): Promise<string> {
    const prompt = userPrompt(this.format, content);
    const stopTokens = stopTokensOf(this.format);
    const generation = await this.options.policy.generate({
      ...this.sampling,
      prompt,
      stopTokens,
      seed: (this.sampling.seed ?? 0) + this.calls++,
    });
    return generation.text;
  }

  /** G(p, s, k): k sampled next thoughts, or one reply proposing up to k; repeats kept once. */
  private async children(parent: ThoughtNode): Promise<string[][]> {
    const { generator } = this.options;
    const found: string[] = [];
    if (generator.kind === 'sample') {
      const prompt = (generator.prompt ?? defaultPrompts.sample)(this.problem.input, parent.thoughts);
      for (let i = 0; i < generator.k; i++) found.push(((await this.ask(prompt)).trim().split('\n')[0] ?? '').trim());
    } else {
      const text = await this.ask(
        (generator.prompt ?? defaultPrompts.propose)(this.problem.input, parent.thoughts, generator.k),
      );
      found.push(
        ...text
          .split('\n')
          .map((line) => line.replace(/^\s*(?:\d+[.)]|[-*])\s*/, '').trim())
          .slice(0, generator.k),
      );
    }
    return [...new Set(found.filter((thought) => thought !== ''))].map((thought) => [...parent.thoughts, thought]);
  }

  /** V(p, S) by value: n ratings summed per state (cached per state). */
  private async rate(
    states: readonly string[][],
    evaluator: Extract<StateEvaluator, { kind: 'value' }>,
  ): Promise<number[]> {
    const values: number[] = [];
    for (const thoughts of states) {
      const key = JSON.stringify(thoughts);
      let value = this.valueCache.get(key);
      if (value === undefined) {
        value = 0;
        const prompt = (evaluator.prompt ?? defaultPrompts.value)(this.problem.input, thoughts);
        for (let i = 0; i < (evaluator.samples ?? 3); i++) value += parseValue(await this.ask(prompt));
        this.valueCache.set(key, value);
      }
      values.push(value);
    }
    return values;
  }

  /** V(p, S) by vote: n votes for the most promising state, value = votes. */
  private async vote(
    states: readonly string[][],
    evaluator: Extract<StateEvaluator, { kind: 'vote' }>,
  ): Promise<number[]> {
    const values = states.map(() => 0);
    if (states.length === 0) return values;
    const prompt = (evaluator.prompt ?? defaultPrompts.vote)(this.problem.input, states);
    for (let i = 0; i < (evaluator.samples ?? 5); i++) {
      const choice = parseVote(await this.ask(prompt), states.length);
      if (choice !== undefined) values[choice] = at(values, choice, 'values') + 1;
    }
    return values;
  }
}

function checkOptions({ problem, generator, search, evaluator }: TreeOfThoughtsOptions): void {
  const positive = (name: string, value: number): void => {
    if (!Number.isInteger(value) || value < 1)
      throw new InvalidArgumentError(`${name} must be a positive integer, got ${value}`, { [name]: value });
  };
  positive('depth', problem.depth);
  positive('k', generator.k);
  if (evaluator.samples !== undefined) positive('samples', evaluator.samples);
  if (search.kind === 'bfs') positive('breadth', search.breadth);
  else if (search.maxStates !== undefined) positive('maxStates', search.maxStates);
}
