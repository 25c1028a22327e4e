/**
 * Toolformer self-annotation of a generated arithmetic-text corpus with the calculator, then SFT on
 * the annotated corpus (built-in model only): `npx tsx examples/toolformer.ts [out.jsonl]`.
 */
import { annotate, toolformerExamples, writeAnnotatedCorpus } from '../src/agents/toolformer.ts';
import { Rng } from '../src/core/rng.ts';
import { evaluateExpression } from '../src/envs/calculator/evaluate.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { isTrainablePolicy, type Policy } from '../src/policy/types.ts';
import { runSft } from '../src/train/sft.ts';
import { examplePolicy, runIfMain } from './policy.ts';

export function arithmeticCorpus(count: number, seed = 0): string[] {
  const rng = new Rng(seed);
  const number = () => 2 + Math.floor(rng.next() * 60);
  return Array.from({ length: count }, () => {
    const [a, b] = [number(), number()];
    return rng.next() < 0.5
      ? `Ann had ${a} pens and got ${b} more, so she had ${a + b} pens.`
      : `A box holds ${a} rows of ${b} eggs, ${a * b} eggs in all.`;
  });
}

export async function example(
  policy: Policy,
  { texts = 8, out, sftSteps = 20 }: { texts?: number; out?: string; sftSteps?: number } = {},
) {
  if (!isTrainablePolicy(policy))
    throw new Error('the Toolformer example scores with the policy: use the built-in model (unset OPENAI_BASE_URL)');
  const corpus = await annotate({
    texts: arithmeticCorpus(texts),
    tool: { name: 'Calculator', execute: (input) => evaluateExpression(input) },
    sampler: policy,
    score: (sequences) => policy.logprobs({ sequences }),
    prompt: 'Insert calculator calls where they help, e.g. "7 and 5 make [Calculator(7 + 5) → 12] 12."\n',
    samplingThreshold: 0.01,
    filteringThreshold: 0.5,
  });
  if (out !== undefined) await writeAnnotatedCorpus(out, corpus);
  const kept = corpus.flatMap((entry) => entry.candidates.filter((c) => c.status === 'kept'));
  const statuses = corpus.flatMap((entry) => entry.candidates.map((c) => c.status));
  let finalLoss: number | undefined;
  if (policy instanceof BuiltinPolicy && sftSteps > 0) {
    finalLoss = (
      await runSft({
        policy,
        train: toolformerExamples(corpus, policy.tokenizer, policy.contextWindow),
        config: { steps: sftSteps, batchSize: 4, evalEvery: sftSteps },
      })
    ).finalLoss;
  }
  return {
    candidates: statuses.length,
    kept: kept.length,
    byStatus: Object.fromEntries(
      ['kept', 'filtered', 'tool-error', 'malformed'].map((s) => [s, statuses.filter((x) => x === s).length]),
    ),
    annotated: corpus.map((e) => e.annotated),
    finalLoss,
  };
}

runIfMain(import.meta.url, async () => {
  const { policy, label } = await examplePolicy();
  console.log(`Toolformer on ${label}`);
  const result = await example(policy, { out: process.argv[2] ?? 'toolformer-annotated.jsonl' });
  console.log(
    `${result.candidates} sampled calls: ${JSON.stringify(result.byStatus)}\n${result.annotated.slice(0, 4).join('\n')}\nSFT final loss: ${result.finalLoss ?? '(skipped)'}`,
  );
});
