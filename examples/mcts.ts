/** RAP-style MCTS, the policy as proposer and world model: `npx tsx examples/mcts.ts`. */
import { runMcts } from '../src/agents/mcts.ts';
import type { Policy } from '../src/policy/types.ts';
import { examplePolicy, runIfMain } from './policy.ts';

const numberIn = (state: string): number | undefined => {
  const match = /-?\d+/.exec(state);
  return match === null ? undefined : Number(match[0]);
};

export async function example(policy: Policy, { iterations = 12, maxNewTokens = 60 } = {}) {
  const result = await runMcts({
    policy,
    problem: {
      initialState: 'n = 1 (goal: n = 10; actions: +1, *2, +3)',
      maxDepth: 4,
      isTerminal: (state) => (numberIn(state) ?? 0) >= 10,
      isGoal: (state) => numberIn(state) === 10,
      // The step reward: closer to 10 is better; an unreadable state is penalised.
      reward: ({ nextState }) => {
        const n = numberIn(nextState);
        return n === undefined ? -1 : -Math.abs(10 - n) / 10 + (n === 10 ? 1 : 0);
      },
    },
    iterations,
    sampling: { maxNewTokens, temperature: 0.8 },
  });
  return {
    solved: result.solved,
    path: result.path.map((node) => `${node.action || 'start'} → ${node.state}`),
    calls: result.calls,
    nodes: result.nodes,
  };
}

runIfMain(import.meta.url, async () => {
  const { policy, label } = await examplePolicy();
  console.log(`MCTS (RAP) on ${label}`);
  const result = await example(policy);
  console.log(
    `${result.path.join('\n')}\nsolved: ${result.solved} · ${result.nodes} nodes · ${result.calls} policy calls`,
  );
});
