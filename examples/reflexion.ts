/** Reflexion around ReAct: `npx tsx examples/reflexion.ts`. */
import { runReAct } from '../src/agents/react.ts';
import { describeReAct, reflectionsText, runReflexion } from '../src/agents/reflexion.ts';
import type { Policy } from '../src/policy/types.ts';
import { examplePolicy, runIfMain } from './policy.ts';
import { lookup } from './react.ts';

export async function example(policy: Policy, { trials = 3, maxSteps = 5, maxNewTokens = 200 } = {}) {
  const question = 'Which is larger: the population of Lyon or of Marseille? Answer with the city.';
  const result = await runReflexion({
    policy,
    task: question,
    trials,
    sampling: { maxNewTokens, temperature: 0.7 },
    attempt: async ({ trial, reflections }) => {
      const run = await runReAct({
        policy,
        tools: [lookup],
        question,
        maxSteps,
        sampling: { maxNewTokens, temperature: 0.7, seed: trial },
        ...(reflections.length === 0 ? {} : { instructions: reflectionsText(reflections) }),
      });
      const success = run.answer?.trim().toLowerCase() === 'marseille';
      return {
        success,
        transcript: describeReAct(run),
        feedback: success ? 'correct' : `"${run.answer ?? 'no answer'}" is not correct`,
        result: run,
      };
    },
  });
  return {
    success: result.success,
    trials: result.trials.map((t) => ({ answer: t.outcome.result.answer, reflection: t.reflection })),
  };
}

runIfMain(import.meta.url, async () => {
  const { policy, label } = await examplePolicy();
  console.log(`Reflexion on ${label}`);
  const result = await example(policy);
  result.trials.forEach((t, i) => {
    console.log(
      `trial ${i + 1}: answer ${t.answer ?? '(none)'}${t.reflection === undefined ? '' : `\n  reflection: ${t.reflection}`}`,
    );
  });
  console.log(`success: ${result.success}`);
});
