import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import { TransformerModel, type ModelOptions } from './transformer-model.ts';
import { generate } from './generate.ts';
import type { ModelConfigInput } from '../model/config.ts';
import { tinyModelConfig } from './tiny-model-fixture.ts';

// The prompt runs through the decoder blocks with full attention and each new token with cached
// attention: every sampled log-prob must equal the full-forward score at the sampling temperature,
// for each block shape (past a chunk merge: 20 tokens > 16 per recent chunk).
for (const variant of [
  {
    name: 'Qwen2-shaped: q/k/v bias, untied head',
    config: { ...tinyModelConfig, attentionBias: true, tieWordEmbeddings: false },
    options: {},
  },
  {
    name: 'Qwen3-shaped: q/k norms, head_dim 6 ≠ hidden/heads, one KV head',
    config: {
      vocabSize: 300,
      hiddenSize: 8,
      intermediateSize: 16,
      numLayers: 2,
      numHeads: 2,
      numKvHeads: 1,
      headDimension: 6,
      qkNorm: true,
      maxSeqLen: 64,
      ropeTheta: 1e6,
      initStd: 0.3,
    },
    options: {},
  },
  { name: 'LoRA adapters', config: tinyModelConfig, options: { lora: { rank: 2 } } },
] satisfies { name: string; config: ModelConfigInput; options: ModelOptions }[]) {
  test(`cached-attention sampling log-probs equal full-attention scoring (${variant.name})`, async () => {
    const model = await TransformerModel.create(variant.config, { seed: 3, ...variant.options });
    const rng = new Rng(5);
    const prompts = Array.from({ length: 5 }, () =>
      Array.from({ length: rng.range(1, 19) }, () => rng.int(model.config.vocabSize)),
    );
    const rows = await generate(model, prompts, { maxNewTokens: 20, temperature: 0.8, seed: 2 });
    const scored = await model.score(
      prompts.map((p, b) => [...p, ...at(rows, b).tokens]),
      { temperature: 0.8 },
    );
    rows.forEach((row, b) => {
      assert.equal(row.tokens.length, 20);
      const reference = at(scored.logprobs, b);
      const promptLength = at(prompts, b).length;
      row.logprobs.forEach((lp, i) => {
        const expected = at(reference, promptLength + i);
        assert.ok(Math.abs(lp - expected) < 1e-4, `row ${b} token ${i}: sampled ${lp} scored ${expected}`);
      });
    });
  });
}
