import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../core/rng.ts';
import { CheckpointError, InvalidArgumentError, UnsupportedArchitectureError } from '../core/errors.ts';
import { modelConfigSchema, parameterShapes, type HostParams, type ModelConfigInput } from './config.ts';
import { fromHfConfig, fromHfTensors, toHfConfig, toHfTensors, transpose2d } from './hf-config.ts';
import { at } from '../core/indexing.ts';

const small = (input: ModelConfigInput = {}) =>
  modelConfigSchema.parse({
    vocabSize: 11,
    hiddenSize: 8,
    numLayers: 2,
    numHeads: 2,
    numKvHeads: 1,
    intermediateSize: 12,
    maxSeqLen: 16,
    ...input,
  });

function randomParams(config: ReturnType<typeof small>, seed: number): HostParams {
  const rng = new Rng(seed);
  const params: HostParams = new Map();
  for (const [name, shape] of parameterShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    params.set(name, { shape, data: Float32Array.from({ length: size }, () => rng.normal()) });
  }
  return params;
}

test('toHfConfig writes Llama fields, and Qwen2 for q/k/v biases', () => {
  const llama = toHfConfig(small());
  assert.deepEqual(llama.architectures, ['LlamaForCausalLM']);
  assert.equal(llama.model_type, 'llama');
  assert.equal(llama.attention_bias, false);
  assert.equal(llama.num_key_value_heads, 1);
  assert.equal(llama.max_position_embeddings, 16);
  assert.equal(llama.hidden_act, 'silu');
  assert.equal(llama.torch_dtype, 'float32');
  assert.equal(llama.head_dim, 4);
  assert.deepEqual([llama.bos_token_id, llama.eos_token_id, llama.pad_token_id], [257, 258, 256]);
  const qwen = toHfConfig(small({ attentionBias: true }));
  assert.deepEqual(qwen.architectures, ['Qwen2ForCausalLM']);
  assert.equal(qwen.model_type, 'qwen2');
  assert.equal(qwen.use_sliding_window, false);
  assert.throws(() => toHfConfig(small(), { architecture: 'Qwen2ForCausalLM' }), InvalidArgumentError);
  assert.throws(
    () => toHfConfig(small({ attentionBias: true }), { architecture: 'LlamaForCausalLM' }),
    InvalidArgumentError,
  );
});

test('fromHfConfig(toHfConfig(c)) === c for both architectures', () => {
  for (const config of [
    small(),
    small({ attentionBias: true, tieWordEmbeddings: false, ropeTheta: 1e6, rmsNormEps: 1e-5, initStd: 0.01 }),
  ]) {
    assert.deepEqual(fromHfConfig(toHfConfig(config)), config);
  }
});

test('fromHfConfig reads a Qwen2-0.5B style config', () => {
  const config = fromHfConfig({
    architectures: ['Qwen2ForCausalLM'],
    model_type: 'qwen2',
    hidden_size: 896,
    intermediate_size: 4864,
    num_hidden_layers: 24,
    num_attention_heads: 14,
    num_key_value_heads: 2,
    vocab_size: 151936,
    max_position_embeddings: 32768,
    rope_theta: 1000000.0,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: true,
    hidden_act: 'silu',
    sliding_window: 32768,
    use_sliding_window: false,
    max_window_layers: 24,
    torch_dtype: 'bfloat16',
    bos_token_id: 151643,
    eos_token_id: 151643,
  });
  assert.deepEqual(
    [
      config.hiddenSize,
      config.intermediateSize,
      config.numLayers,
      config.numHeads,
      config.numKvHeads,
      config.vocabSize,
      config.maxSeqLen,
    ],
    [896, 4864, 24, 14, 2, 151936, 32768],
  );
  assert.equal(config.ropeTheta, 1e6);
  assert.equal(config.attentionBias, true);
  assert.equal(config.tieWordEmbeddings, true);
});

test('fromHfConfig lists every unsupported feature', () => {
  const hf = {
    ...toHfConfig(small()),
    hidden_act: 'gelu',
    rope_scaling: { type: 'linear', factor: 2 },
    mlp_bias: true,
  };
  assert.throws(
    () => fromHfConfig(hf, { file: 'x/config.json' }),
    (error: unknown) => {
      assert.ok(error instanceof CheckpointError);
      assert.match(error.message, /^x\/config\.json: /);
      assert.match(error.message, /hidden_act "gelu"/);
      assert.match(error.message, /rope_scaling/);
      assert.match(error.message, /mlp_bias/);
      return true;
    },
  );
  assert.throws(
    () => fromHfConfig({ architectures: ['GPT2LMHeadModel'] }),
    (error: unknown) =>
      error instanceof UnsupportedArchitectureError &&
      error.architecture === 'GPT2LMHeadModel' &&
      /supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM/.test(error.message),
  );
  assert.throws(
    () => fromHfConfig({ architectures: ['LlamaForCausalLM'], hidden_size: 8 }),
    /vocab_size must be a positive integer/,
  );
});

test('tensor names follow HF; linear weights are transposed to [out, in]', () => {
  const config = small({ attentionBias: true, tieWordEmbeddings: false, valueHead: true });
  const params = randomParams(config, 1);
  const hf = toHfTensors(config, params);
  assert.deepEqual(
    [...hf.keys()].sort(),
    [
      'lm_head.weight',
      'model.embed_tokens.weight',
      ...[0, 1].flatMap((i) =>
        [
          'input_layernorm.weight',
          'mlp.down_proj.weight',
          'mlp.gate_proj.weight',
          'mlp.up_proj.weight',
          'post_attention_layernorm.weight',
          'self_attn.k_proj.bias',
          'self_attn.k_proj.weight',
          'self_attn.o_proj.weight',
          'self_attn.q_proj.bias',
          'self_attn.q_proj.weight',
          'self_attn.v_proj.bias',
          'self_attn.v_proj.weight',
        ].map((suffix) => `model.layers.${i}.${suffix}`),
      ),
      'model.norm.weight',
      'v_head.summary.bias',
      'v_head.summary.weight',
    ].sort(),
  );
  // k_proj: internal [D=8, KV·hd=4] → HF [4, 8]; HF[o][i] == internal[i][o]
  const wk = params.get('layers.1.wk')!;
  const kProj = hf.get('model.layers.1.self_attn.k_proj.weight')!;
  assert.deepEqual(kProj.shape, [4, 8]);
  for (let i = 0; i < 8; i++) for (let o = 0; o < 4; o++) assert.equal(kProj.data[o * 8 + i], wk.data[i * 4 + o]);
  // HF Linear y = x Wᵀ + b equals the internal x @ W + b
  const x = Float32Array.from({ length: 8 }, (_, i) => i - 3.5);
  const bk = params.get('layers.1.bk')!.data;
  for (let o = 0; o < 4; o++) {
    let internal = at(bk, o);
    let hfValue = at(hf.get('model.layers.1.self_attn.k_proj.bias')!.data, o);
    for (let i = 0; i < 8; i++) {
      internal += at(x, i) * at(wk.data, i * 4 + o);
      hfValue += at(x, i) * at(kProj.data, o * 8 + i);
    }
    assert.equal(hfValue, internal);
  }
  assert.deepEqual(hf.get('lm_head.weight')!.shape, [11, 8]);
  assert.deepEqual(hf.get('v_head.summary.weight')!.shape, [1, 8]);
  assert.deepEqual(hf.get('model.embed_tokens.weight')!.data, params.get('embed')!.data);
});

test('HostParams → HF → HostParams is bit-exact', () => {
  for (const config of [small(), small({ attentionBias: true, tieWordEmbeddings: false, valueHead: true })]) {
    const params = randomParams(config, 2);
    const back = fromHfTensors(config, toHfTensors(config, params));
    assert.deepEqual([...back.keys()], [...params.keys()]);
    for (const [name, tensor] of params) {
      assert.deepEqual(back.get(name)!.shape, tensor.shape);
      assert.deepEqual(back.get(name)!.data, tensor.data);
    }
  }
});

test('tied config ignores lm_head.weight and rotary buffers', () => {
  const config = small();
  const hf = toHfTensors(config, randomParams(config, 3));
  hf.set('lm_head.weight', { shape: [11, 8], data: new Float32Array(88) });
  hf.set('model.layers.0.self_attn.rotary_emb.inv_freq', { shape: [2], data: new Float32Array(2) });
  assert.equal(fromHfTensors(config, hf).size, parameterShapes(config).size);
});

test('missing, misshapen and unknown tensors are listed in one CheckpointError', () => {
  const config = small();
  const hf = toHfTensors(config, randomParams(config, 4));
  hf.delete('model.norm.weight');
  hf.set('model.layers.0.mlp.up_proj.weight', { shape: [8, 12], data: new Float32Array(96) });
  hf.set('model.layers.0.self_attn.o_proj.bias', { shape: [8], data: new Float32Array(8) });
  assert.throws(
    () => fromHfTensors(config, hf, { file: 'm.safetensors' }),
    (error: unknown) => {
      assert.ok(error instanceof CheckpointError);
      assert.match(
        error.message,
        /^m\.safetensors: missing tensors: model\.norm\.weight; wrong shapes: model\.layers\.0\.mlp\.up_proj\.weight \[8,12\] \(expected \[12,8\]\); unknown tensors: model\.layers\.0\.self_attn\.o_proj\.bias$/,
      );
      assert.deepEqual(error.details.missing, ['model.norm.weight']);
      return true;
    },
  );
});

test('toHfTensors rejects params that do not match the config', () => {
  const config = small();
  const params = randomParams(config, 5);
  params.delete('finalNorm');
  params.set('extra', { shape: [1], data: new Float32Array(1) });
  assert.throws(() => toHfTensors(config, params), /missing "finalNorm".*unexpected "extra"/);
});

test('transpose2d', () => {
  assert.deepEqual([...transpose2d(Float32Array.of(1, 2, 3, 4, 5, 6), 2, 3)], [1, 4, 2, 5, 3, 6]);
  assert.throws(() => transpose2d(Float32Array.of(1, 2, 3, 4, 5), 2, 3), /5 values are not 2 × 3/);
});
