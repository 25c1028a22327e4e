import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../core/rng.ts';
import { modelConfigSchema, parameterShapes, type HostParams, type HostTensor } from './config.ts';
import { loadCheckpoint } from './checkpoint.ts';
import { toHfConfig, toHfTensors } from './hf-config.ts';
import { at } from '../core/indexing.ts';

const config = modelConfigSchema.parse({
  vocabSize: 16,
  hiddenSize: 8,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 12,
  maxSeqLen: 32,
  tieWordEmbeddings: false,
});

function randomParams(seed: number): HostParams {
  const rng = new Rng(seed);
  const params: HostParams = new Map();
  for (const [name, shape] of parameterShapes(config))
    params.set(name, {
      shape,
      data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal()),
    });
  return params;
}

/** float32 → bfloat16 bits, round to nearest even (as torch's .to(torch.bfloat16)). */
function toBf16Bits(value: number): number {
  const bits = at(new Uint32Array(new Float32Array([value]).buffer), 0);
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** A safetensors file of 16-bit tensors, written the way torch's save_file lays it out. */
function safetensors16(
  tensors: [string, HostTensor][],
  dtype: 'BF16' | 'F16',
  encode: (value: number) => number,
): Uint8Array {
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const [name, tensor] of tensors) {
    header[name] = { dtype, shape: tensor.shape, data_offsets: [offset, offset + 2 * tensor.data.length] };
    offset += 2 * tensor.data.length;
  }
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + headerBytes.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let position = 8 + headerBytes.length;
  for (const [, tensor] of tensors)
    for (const value of tensor.data) view.setUint16(position, encode(value), true), (position += 2);
  return out;
}

/** float32 → float16 bits for values that are exact in float16 (the test feeds only those). */
function toF16Bits(value: number): number {
  if (value === 0) return 0;
  const sign = value < 0 ? 0x8000 : 0;
  const exponent = Math.floor(Math.log2(Math.abs(value)));
  const fraction = Math.round((Math.abs(value) / 2 ** exponent - 1) * 1024);
  return sign | ((exponent + 15) << 10) | fraction;
}

test('a Hugging Face folder with sharded bf16 safetensors (model.safetensors.index.json) loads as float32', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'agentrl-hf-bf16-'));
  try {
    const hf = [...toHfTensors(config, randomParams(7))];
    const shards = [hf.slice(0, 10), hf.slice(10)];
    const weightMap: Record<string, string> = {};
    for (const [i, shard] of shards.entries()) {
      const file = `model-0000${i + 1}-of-00002.safetensors`;
      await writeFile(join(folder, file), safetensors16(shard, 'BF16', toBf16Bits));
      for (const [name] of shard) weightMap[name] = file;
    }
    await writeFile(
      join(folder, 'model.safetensors.index.json'),
      JSON.stringify({ metadata: { total_size: 0 }, weight_map: weightMap }),
    );
    await writeFile(join(folder, 'config.json'), JSON.stringify({ ...toHfConfig(config), torch_dtype: 'bfloat16' }));
    const loaded = await loadCheckpoint(folder);
    assert.deepEqual(loaded.config, config);
    const expected = toHfTensors(config, randomParams(7));
    const reloaded = toHfTensors(loaded.config, loaded.params);
    for (const [name, tensor] of expected) {
      const bf16 = Float32Array.from(tensor.data, (value) =>
        at(new Float32Array(new Uint32Array([toBf16Bits(value) << 16]).buffer), 0),
      );
      assert.deepEqual(reloaded.get(name)!.data, bf16, name);
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});

test('a Hugging Face folder with one fp16 model.safetensors loads as float32', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'agentrl-hf-f16-'));
  try {
    // Values exact in float16: k/64 for k in [-128, 128].
    const rng = new Rng(8);
    const params: HostParams = new Map();
    for (const [name, shape] of parameterShapes(config))
      params.set(name, {
        shape,
        data: Float32Array.from(
          { length: shape.reduce((a, b) => a * b, 1) },
          () => ((rng.nextUint32() % 257) - 128) / 64,
        ),
      });
    await writeFile(
      join(folder, 'model.safetensors'),
      safetensors16([...toHfTensors(config, params)], 'F16', toF16Bits),
    );
    await writeFile(join(folder, 'config.json'), JSON.stringify({ ...toHfConfig(config), torch_dtype: 'float16' }));
    const loaded = await loadCheckpoint(folder);
    for (const [name, tensor] of params) assert.deepEqual(loaded.params.get(name)!.data, tensor.data, name);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
