/**
 * agentrl's LoRA PPO step on SmolLM2-135M's shape (a bench:engine child): rows × length tokens
 * (the last 3/4 of each row trained), rank 16, alpha 32, all seven projections, through the
 * `TrainablePolicy` contract the RL trainer calls (`BuiltinPolicy.trainStep`: forward, the host
 * PPO-clip loss of src/algorithms/rl-loss.ts, backward, clip, AdamW). The old log-probs come from
 * a scoring run before each step (the sampler's, in RL), not timed. Best of `reps` steps after a
 * warm-up step (which builds the graphs and sessions). Its peer: bench/engine_train_torch.py.
 * Figure names: `stepSeconds`, `firstStepSeconds`.
 */
import type { Measurement } from './engine-spawn.ts';
import { tokenRows, tokenStream, type WeightKind } from './engine-workload.ts';
import { benchWeights } from './engine-weights.ts';

export interface StepArgs {
  threads: number;
  weights: WeightKind;
  model: string;
  rows: number;
  length: number;
  reps: number;
  /** Padded tokens per training run; 0: the model's own budget. */
  trainTokens: number;
}

const projections = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export const loraStep = { rank: 16, alpha: 32, targetModules: [...projections] };

/** Tokens of each row not trained (the prompt): the first quarter. */
export const stepPrompt = (length: number): number => Math.floor(length / 4);

/** In a child: the LoRA PPO step's time on agentrl's engine. */
export async function measureStep(args: StepArgs): Promise<Measurement> {
  const { TransformerModel } = await import('../src/engine/transformer-model.ts');
  const { BuiltinPolicy } = await import('../src/policy/builtin-policy.ts');
  const { rlLoss } = await import('../src/algorithms/rl-loss.ts');
  const { config, params } = await benchWeights(args.weights, args.model);
  const model = await TransformerModel.fromParams(config, params, { seed: 1, lora: loraStep });
  if (args.trainTokens > 0) model.trainTokenBudget = args.trainTokens;
  const policy = new BuiltinPolicy({ model });
  const sequences = tokenRows(args.rows, args.length, config.vocabSize);
  const prompt = stepPrompt(args.length);
  const lossMask = sequences.map((row) => Float64Array.from(row, (_, t) => (t >= prompt ? 1 : 0)));
  const next = tokenStream(1000, 99);
  const advantages = sequences.map((row) => Float64Array.from(row, () => next() / 1000 - 0.5));
  const step = async (): Promise<number> => {
    const oldLogprobs = await policy.logprobs({ sequences });
    const start = performance.now();
    await policy.trainStep({ sequences }, rlLoss({ oldLogprobs, advantages, lossMask }), { learningRate: 1e-4 });
    return (performance.now() - start) / 1000;
  };
  const firstStepSeconds = await step();
  let best = Infinity;
  for (let rep = 0; rep < args.reps; rep++) best = Math.min(best, await step());
  return {
    system: 'agentrl TransformerModel + BuiltinPolicy',
    threads: `${args.threads} (AGENTRL_THREADS)`,
    figures: { stepSeconds: best, firstStepSeconds },
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    note: `${args.weights} weights; first step ${firstStepSeconds.toFixed(1)} s; best of ${args.reps}`,
  };
}
