/**
 * check:real, agentrl side (reference.py is the Python side; run.sh runs both).
 *
 *   synthetic <out.gguf>                 a GGUF of seeded random blocks of every supported type
 *   dequant <file.gguf> <out-dir>        every tensor dequantized by agentrl: index.json + data.bin (float32)
 *   logits <file.gguf> <out-dir>         SmolLM2's logits [B, T, V] on a few short prompts: ids.json + logits.bin
 *   tiny-folders <out-dir>               seeded tiny Qwen3 (head_dim ≠ hidden/heads, q/k norms) and Qwen2 (q/k/v bias)
 *                                        HF folders written by saveCheckpoint, with agentrl's logits beside each
 *   export <model> <out-dir>             SmolLM2 + a seeded LoRA (B ≠ 0) saved as `agentrl train --model … --lora-rank`
 *                                        saves (export-stage.ts), with agentrl's merged logits, ids and chat rendering
 */
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Rng } from '../../../src/core/rng.ts';
import { ggmlBlockLayout, type GgmlTypeName } from '../../../src/model/gguf-dequant.ts';
import { readGguf, readGgufTensor } from '../../../src/model/gguf.ts';
import { loadGgufModel } from '../../../src/model/gguf-model.ts';
import { writeGguf, type GgufWriterTensor } from '../../../src/model/gguf-writer.ts';
import { headDim } from '../../../src/model/config.ts';
import { saveCheckpoint } from '../../../src/model/checkpoint.ts';
import { fromHfConfig } from '../../../src/model/hf-config.ts';
import { initHostParams } from '../../../src/model/params.ts';
import { exportStage } from './export-stage.ts';
import { forwardLogits, paddedRows } from './forward-logits.ts';
import { at } from '../../../src/core/indexing.ts';

/** Byte offsets of the f16 scale fields in each block type (random bytes there could be NaN/∞). */
const halfFields: Partial<Record<GgmlTypeName, number[]>> = {
  Q8_0: [0],
  Q4_0: [0],
  Q4_1: [0, 2],
  Q5_0: [0],
  Q5_1: [0, 2],
  Q4_K: [0, 2],
  Q5_K: [0, 2],
  Q6_K: [208],
};

async function synthetic(out: string): Promise<void> {
  const rng = new Rng(16);
  const tensors: GgufWriterTensor[] = [];
  for (const type of [
    'F32',
    'F16',
    'BF16',
    'Q8_0',
    'Q4_0',
    'Q4_1',
    'Q5_0',
    'Q5_1',
    'Q4_K',
    'Q5_K',
    'Q6_K',
  ] as GgmlTypeName[]) {
    const shape = [3, 512];
    const layout = ggmlBlockLayout[type];
    const blocks = (at(shape, 0) * at(shape, 1)) / layout.values;
    const bytes = new Uint8Array(blocks * layout.bytes);
    const view = new DataView(bytes.buffer);
    if (type === 'F32') for (let i = 0; i < blocks; i++) view.setFloat32(4 * i, rng.normal(), true);
    else if (type === 'BF16')
      for (let i = 0; i < blocks; i++)
        view.setUint16(2 * i, at(new Uint32Array(new Float32Array([rng.normal()]).buffer), 0) >>> 16, true);
    else {
      for (let i = 0; i < bytes.length; i++) bytes[i] = rng.nextUint32() & 0xff;
      // f16 fields: a random finite half in [-2, 2): sign, exponent 5..15, any fraction.
      const randomHalf = () =>
        ((rng.nextUint32() & 1) << 15) | ((5 + (rng.nextUint32() % 11)) << 10) | (rng.nextUint32() & 0x3ff);
      if (type === 'F16') for (let i = 0; i < blocks; i++) view.setUint16(2 * i, randomHalf(), true);
      for (let b = 0; b < blocks; b++)
        for (const offset of halfFields[type] ?? []) view.setUint16(b * layout.bytes + offset, randomHalf(), true);
    }
    tensors.push({ name: `random.${type}`, shape, type, bytes });
  }
  await writeFile(out, writeGguf({ metadata: { 'general.architecture': { type: 'string', value: 'none' } }, tensors }));
  console.log(`wrote ${out}: ${tensors.length} tensors, 1,536 values each`);
}

async function dequant(file: string, outDir: string): Promise<void> {
  const gguf = await readGguf(file);
  await mkdir(outDir, { recursive: true });
  const index: { name: string; type: string; shape: number[]; offset: number; count: number }[] = [];
  const chunks: Float32Array[] = [];
  let offset = 0;
  for (const info of gguf.tensors) {
    const { data } = readGgufTensor(gguf, info);
    index.push({ name: info.name, type: info.type, shape: info.shape, offset, count: data.length });
    chunks.push(data);
    offset += data.length;
  }
  const all = new Float32Array(offset);
  let position = 0;
  for (const chunk of chunks) {
    all.set(chunk, position);
    position += chunk.length;
  }
  await writeFile(join(outDir, 'index.json'), JSON.stringify(index));
  await writeFile(join(outDir, 'data.bin'), new Uint8Array(all.buffer));
  console.log(`agentrl dequantized ${index.length} tensors (${offset.toLocaleString('en')} values) of ${file}`);
}

const prompts = [
  'The capital of France is',
  '<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n',
  'def fibonacci(n):\n    if n < 2:\n        return n',
  'Once upon a time, in a small village by the sea,',
];

async function logits(file: string, outDir: string): Promise<void> {
  const started = Date.now();
  const { config, params, tokenizer } = await loadGgufModel(file);
  const ids = prompts.map((prompt) => tokenizer.encode(prompt));
  const { tokens, keyMask, B, T } = paddedRows(ids);
  const out = await forwardLogits(config, params, tokens, keyMask, B, T);
  await mkdir(outDir, { recursive: true });
  // Tokenizer cases: every non-empty line of the repository's docs, plus a few awkward strings.
  const docs = await readdir('docs');
  const lines = (
    await Promise.all(
      docs
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => readFile(join('docs', name), 'utf8')),
    )
  )
    .flatMap((text) => text.split('\n'))
    .filter((line) => line.trim() !== '');
  const texts = [
    ...lines.slice(0, 1500),
    'naïve café — 東京 🚀 ',
    '  two  spaces\tand\ttabs\n\n',
    "it's I'LL we've",
    '12345678901234',
    '<|im_start|>assistant\n<tool_call>[{"name": "f"}]</tool_call><|im_end|>',
  ];
  const tokenizerCases = texts.map((text) => ({ text, ids: tokenizer.encode(text) }));
  await writeFile(
    join(outDir, 'ids.json'),
    JSON.stringify({ prompts, ids, seqLen: T, vocabSize: config.vocabSize, tokenizerCases }),
  );
  await writeFile(join(outDir, 'logits.bin'), new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
  console.log(
    `agentrl logits [${B}, ${T}, ${config.vocabSize}] in ${((Date.now() - started) / 1000).toFixed(1)} s (prompt lengths ${ids.map((row) => row.length).join(', ')})`,
  );
}

async function tinyFolders(outDir: string): Promise<void> {
  const common = {
    vocab_size: 300,
    hidden_size: 64,
    intermediate_size: 96,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    max_position_embeddings: 64,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: false,
    hidden_act: 'silu',
    initializer_range: 0.2,
  };
  const models = {
    qwen3: {
      ...common,
      architectures: ['Qwen3ForCausalLM'],
      model_type: 'qwen3',
      head_dim: 24,
      rope_theta: 1000000,
      attention_bias: false,
    },
    qwen2: { ...common, architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', rope_theta: 10000 },
  };
  const rng = new Rng(5);
  const tokens = Int32Array.from({ length: 12 }, () => rng.nextUint32() % 300);
  for (const [name, hfConfig] of Object.entries(models)) {
    const config = fromHfConfig(hfConfig);
    const params = initHostParams(config, 11);
    // Norm weights and biases away from their init (1, 0), so q/k norms and biases are exercised.
    for (const [key, tensor] of params)
      if (/Norm$|\.b[qkv]$/.test(key))
        for (let i = 0; i < tensor.data.length; i++)
          tensor.data[i] = (key.endsWith('Norm') ? 1 : 0) + 0.5 * rng.normal();
    const folder = join(outDir, name);
    await saveCheckpoint(folder, { config, params });
    const logits = await forwardLogits(
      config,
      params,
      tokens,
      new Float32Array(tokens.length).fill(1),
      1,
      tokens.length,
    );
    await writeFile(join(folder, 'agentrl-ids.json'), JSON.stringify({ ids: [...tokens] }));
    await writeFile(
      join(folder, 'agentrl-logits.bin'),
      new Uint8Array(logits.buffer, logits.byteOffset, logits.byteLength),
    );
    console.log(
      `wrote ${name} (${hfConfig.architectures[0]}, head_dim ${headDim(config)}) with agentrl's logits [1, ${tokens.length}, 300]`,
    );
  }
}

const [command, ...args] = process.argv.slice(2);
if (command === 'synthetic') await synthetic(at(args, 0));
else if (command === 'dequant') await dequant(at(args, 0), at(args, 1));
else if (command === 'logits') await logits(at(args, 0), at(args, 1));
else if (command === 'tiny-folders') await tinyFolders(at(args, 0));
else if (command === 'export') await exportStage(at(args, 0), at(args, 1), prompts);
else {
  console.error(
    'usage: check.ts synthetic <out.gguf> | dequant <file.gguf> <out-dir> | logits <file.gguf> <out-dir> | tiny-folders <out-dir> | export <model> <out-dir>',
  );
  process.exit(2);
}
