/** Tree of Thoughts on a small puzzle (BFS or DFS): `npx tsx examples/tree-of-thoughts.ts [dfs]`. */
import { runTreeOfThoughts } from '../src/agents/tree-of-thoughts.ts';
import type { Policy } from '../src/policy/types.ts';
import { examplePolicy, runIfMain } from './policy.ts';

export async function example(policy: Policy, { search = 'bfs', maxNewTokens = 120 } = {}) {
  // Reach 24 from 4 9 10 13 in three steps, one operation per step (Game of 24).
  const input = '4 9 10 13: use + - * / on two of the numbers per step, three steps, to reach 24';
  const result = await runTreeOfThoughts({
    policy,
    problem: { input, depth: 3, isSolution: (thoughts) => /=\s*24\b/.test(thoughts.at(-1) ?? '') },
    generator: { kind: 'propose', k: 4 },
    evaluator: { kind: 'value', samples: 2 },
    search: search === 'dfs' ? { kind: 'dfs', threshold: 1.5, maxStates: 30 } : { kind: 'bfs', breadth: 2 },
    sampling: { maxNewTokens, temperature: 0.7 },
  });
  return {
    solved: result.solved,
    best: result.best?.thoughts ?? [],
    states: result.tree.length,
    calls: result.calls,
    stopReason: result.stopReason,
  };
}

runIfMain(import.meta.url, async () => {
  const { policy, label } = await examplePolicy();
  const search = process.argv[2] === 'dfs' ? 'dfs' : 'bfs';
  console.log(`Tree of Thoughts (${search}) on ${label}`);
  const result = await example(policy, { search });
  console.log(
    `best: ${result.best.join(' | ') || '(none)'}\nsolved: ${result.solved} · ${result.states} states · ${result.calls} policy calls · ${result.stopReason}`,
  );
});
