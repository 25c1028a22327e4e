/**
 * Test fixture for the learning smoke tests: a tiny built-in model warm-started on the bandit with
 * imperfect demonstrations (80% random arms, so ≈60% pick the better arm), and a frozen reference,
 * each also as a `BuiltinPolicy` (what the trainers take).
 */
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { getEnvironment } from '../envs/index.ts';
import { warmStart, warmStartConfigSchema } from './warm-start.ts';

export const bandit = getEnvironment('bandit');
export const makeBanditEnv = () => bandit.make({});

/** `sftSteps` / `demonstrations` shorten the warm start for tests that need a varied policy, not a learning one. */
export async function warmStartedBandit({
  valueHead = false,
  sftSteps = 80,
  demonstrations = 64,
}: {
  valueHead?: boolean;
  sftSteps?: number;
  demonstrations?: number;
} = {}): Promise<{
  model: TransformerModel;
  reference: TransformerModel;
  policy: BuiltinPolicy;
  referencePolicy: BuiltinPolicy;
}> {
  const model = await TransformerModel.create(
    {
      vocabSize: 272,
      hiddenSize: 64,
      numLayers: 2,
      numHeads: 2,
      numKvHeads: 1,
      intermediateSize: 128,
      maxSeqLen: 64,
      valueHead,
    },
    { seed: 1 },
  );
  const policy = new BuiltinPolicy({ model });
  await warmStart({
    policy,
    env: makeBanditEnv,
    expert: (seed, randomActionRate) => bandit.expert({ seed, randomActionRate }),
    config: warmStartConfigSchema.parse({
      demonstrations,
      randomActionRate: 0.8,
      sftSteps,
      sftBatchSize: 16,
      sftLearningRate: 1e-2,
    }),
    maxTurns: 1,
    maxNewTokens: 24,
    instructions: false,
  });
  const reference = await TransformerModel.fromParams(
    { ...model.config, valueHead: false },
    withoutValueHead(await model.hostParams()),
  );
  return { model, reference, policy, referencePolicy: new BuiltinPolicy({ model: reference }) };
}

function withoutValueHead<T extends Map<string, unknown>>(params: T): T {
  params.delete('valueHead.w');
  params.delete('valueHead.b');
  return params;
}
