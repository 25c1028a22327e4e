/**
 * Test fixture for the multi-agent trainer: tiny byte models, one per role, as LoRA adapters over
 * ONE frozen base (`forkAdapters` of one LoRA model), a built-in policy whose
 * replies are scripted (its scoring and updates are the real model's), and negotiation on a fixed task.
 */
import type { Env } from '../../core/types.ts';
import { makeNegotiation } from '../../envs/negotiation/env.ts';
import type { NegotiationTask } from '../../envs/negotiation/game.ts';
import { TransformerModel } from '../../engine/transformer-model.ts';
import { BuiltinPolicy } from '../../policy/builtin-policy.ts';
import { ScriptedPolicy } from '../../policy/scripted-policy.ts';
import { at } from '../../core/indexing.ts';
import type { GenerateRequest, Generation } from '../../policy/types.ts';

export const tinyConfig = {
  vocabSize: 272,
  hiddenSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 64,
  maxSeqLen: 256,
};

/** One model per role seed, each with fresh LoRA adapters (forkAdapters) over ONE base: the same host arrays and generation session. */
export async function loraRoleModels(seeds: readonly number[]): Promise<TransformerModel[]> {
  const base = await (await TransformerModel.create(tinyConfig, { seed: 7 })).hostParams();
  const parent = await TransformerModel.fromParams(tinyConfig, base, { lora: { rank: 4 }, seed: 0 });
  const models: TransformerModel[] = [];
  for (const seed of seeds) models.push(await parent.forkAdapters({ seed }));
  return models;
}

/**
 * The built-in model's scoring, updates and state, with scripted replies (so rewards are known by
 * hand): the i-th request of a batch gets `replies[i % replies.length]` — stateless, so a resumed
 * run replies as the uninterrupted one did.
 */
export class ScriptedBuiltinPolicy extends BuiltinPolicy {
  private readonly scripts: ScriptedPolicy[];

  constructor(model: TransformerModel, replies: readonly string[]) {
    super({ model });
    this.scripts = replies.map(
      (reply) => new ScriptedPolicy({ reply: [reply], contextWindow: model.config.maxSeqLen }),
    );
  }

  override generateBatch(requests: readonly GenerateRequest[]): Promise<Generation[]> {
    return Promise.all(
      requests.map((request, i) => at(this.scripts, i % this.scripts.length, 'scripts').generate(request)),
    );
  }
}

/** Alice keeps 1 book + 2 balls (worth 8 to her), Bob gets 2 hats + 1 ball (worth 6 to him). */
export const fixedNegotiationTask: NegotiationTask = {
  counts: [1, 2, 3],
  values: [
    [4, 0, 2],
    [0, 2, 2],
  ],
};

/** Negotiation on `fixedNegotiationTask` whatever the seed. */
export function fixedTaskNegotiation(): Env {
  const env = makeNegotiation();
  return {
    name: env.name,
    instructions: env.instructions,
    reset: ({ seed }) => env.reset({ seed, task: fixedNegotiationTask }),
    step: (action) => env.step(action),
  };
}
