import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { headDim, parameterShapes } from '../model/config.ts';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint.ts';
import { fromHfConfig } from '../model/hf-config.ts';
import { initHostParams } from '../model/params.ts';
import { TransformerModel } from './transformer-model.ts';
import { at } from '../core/indexing.ts';

/** A tiny Qwen3 config.json: head_dim 6 differs from hidden_size / heads = 4, as in Qwen3-0.6B (128 vs 64). */
const qwen3Json = {
  architectures: ['Qwen3ForCausalLM'],
  model_type: 'qwen3',
  vocab_size: 300,
  hidden_size: 8,
  intermediate_size: 16,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 6,
  max_position_embeddings: 64,
  rope_theta: 1000000,
  rms_norm_eps: 1e-6,
  tie_word_embeddings: true,
  attention_bias: false,
  hidden_act: 'silu',
  use_sliding_window: false,
};

test('a Qwen3 config.json maps to head_dim from the config, q/k norms, no q/k/v bias', () => {
  const config = fromHfConfig(qwen3Json);
  assert.equal(headDim(config), 6);
  assert.equal(config.qkNorm, true);
  assert.equal(config.attentionBias, false);
  const shapes = parameterShapes(config);
  assert.deepEqual(shapes.get('layers.0.wq'), [8, 12]);
  assert.deepEqual(shapes.get('layers.0.wk'), [8, 6]);
  assert.deepEqual(shapes.get('layers.0.wo'), [12, 8]);
  assert.deepEqual(shapes.get('layers.1.qNorm'), [6]);
  assert.deepEqual(shapes.get('layers.1.kNorm'), [6]);
  assert.equal(shapes.has('layers.0.bq'), false);
  assert.throws(
    () => fromHfConfig({ ...qwen3Json, attention_bias: true }),
    /attention_bias .*not supported for Qwen3ForCausalLM/,
  );
});

test('Qwen3 forward: finite log-probs of the right shape, and the q/k norms take part', async () => {
  const config = fromHfConfig(qwen3Json);
  const params = initHostParams(config, 3);
  const sequence = [1, 5, 9, 200, 7, 3];
  const model = await TransformerModel.fromParams(config, params);
  const { logprobs } = await model.score([sequence]);
  assert.equal(logprobs.length, 1);
  assert.equal(at(logprobs, 0).length, sequence.length);
  assert.ok(at(logprobs, 0).every(Number.isFinite));
  assert.ok(
    at(logprobs, 0)
      .slice(1)
      .every((value) => value < 0),
  );

  const scaled = new Map(params);
  scaled.set('layers.0.qNorm', { shape: [6], data: new Float32Array([3, 0.5, 2, 1, 4, 0.25]) });
  const other = await (await TransformerModel.fromParams(config, scaled)).score([sequence]);
  assert.notDeepEqual(other.logprobs[0], logprobs[0]);
});

test('a Qwen3 model saves as a HF Qwen3ForCausalLM folder (head_dim, q_norm/k_norm) and loads back', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'agentrl-qwen3-'));
  try {
    const config = fromHfConfig(qwen3Json);
    const params = initHostParams(config, 4);
    await saveCheckpoint(folder, { config, params });
    const written = JSON.parse(await readFile(join(folder, 'config.json'), 'utf8'));
    assert.equal(written.architectures[0], 'Qwen3ForCausalLM');
    assert.equal(written.head_dim, 6);
    const { agentrl: _agentrl, ...hfOnly } = written;
    const fromHf = fromHfConfig(hfOnly);
    assert.deepEqual(fromHf, config);
    const loaded = await loadCheckpoint(folder);
    assert.deepEqual(loaded.params.get('layers.1.kNorm'), params.get('layers.1.kNorm'));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
