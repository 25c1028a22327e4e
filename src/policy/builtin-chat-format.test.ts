import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyChatmlFormat, tinyTokenizerJson } from '../chat/tiny-chatml.ts';
import { loadChatFormat } from '../chat/model-folder.ts';
import { CheckpointError } from '../core/errors.ts';
import type { Message } from '../core/types.ts';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { BuiltinPolicy } from './builtin-policy.ts';

const tiny = {
  vocabSize: 264,
  hiddenSize: 16,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 32,
  maxSeqLen: 256,
};
const conversation: Message[] = [
  { role: 'user', content: '2 * 3' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'call_0', name: 'calculator', arguments: { expression: '2 * 3' } }],
  },
  { role: 'tool', content: '6', toolCallId: 'call_0', name: 'calculator' },
  { role: 'assistant', content: '<answer>6</answer>' },
];

async function withTempDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-policy-format-'));
  try {
    await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("a BuiltinPolicy carries the model's chat format, and its checkpoint writes the model's tokenizer files and reloads in the same format", () =>
  withTempDir(async (dir) => {
    const format = tinyChatmlFormat();
    const policy = new BuiltinPolicy({
      model: await TransformerModel.create(tiny, { seed: 1, lora: { rank: 2 } }),
      chatFormat: format,
    });
    assert.equal(policy.chatFormat, format);
    assert.equal(policy.tokenizer, format.tokenizer);
    await policy.save(join(dir, 'c'));

    assert.deepEqual(JSON.parse(await readFile(join(dir, 'c', 'tokenizer.json'), 'utf8')), tinyTokenizerJson());
    assert.deepEqual(
      JSON.parse(await readFile(join(dir, 'c', 'tokenizer_config.json'), 'utf8')),
      format.files!.tokenizerConfig,
    );
    assert.deepEqual(JSON.parse(await readFile(join(dir, 'c', 'generation_config.json'), 'utf8')), { eos_token_id: 2 });
    const loaded = await loadCheckpoint(join(dir, 'c'));
    assert.ok(loaded.chatFormat !== undefined);
    assert.equal(loaded.tokenizer, loaded.chatFormat.tokenizer);
    assert.deepEqual(loaded.chatFormat.render(conversation), format.render(conversation));
    assert.deepEqual(loaded.chatFormat.stopTokens, format.stopTokens);
    assert.deepEqual(loadChatFormat(join(dir, 'c')).render(conversation), format.render(conversation));

    // Resume / the KL reference: the LoRA state restores onto its base with the same format.
    const restored = await BuiltinPolicy.fromState(await policy.saveState(), {
      baseParams: await policy.model.baseParams(),
      chatFormat: loaded.chatFormat,
    });
    assert.equal(restored.chatFormat, loaded.chatFormat);
    const sequences = [format.render(conversation).tokens];
    assert.deepEqual(await restored.logprobs({ sequences }), await policy.logprobs({ sequences }));
  }));

test('a byte-model checkpoint has no chat format; a chat format without files cannot be saved', () =>
  withTempDir(async (dir) => {
    const model = await TransformerModel.create(tiny, { seed: 1 });
    await new BuiltinPolicy({ model }).save(join(dir, 'byte'));
    const loaded = await loadCheckpoint(join(dir, 'byte'));
    assert.equal(loaded.tokenizer, byteTokenizer);
    assert.equal(loaded.chatFormat, undefined);
    await saveCheckpoint(join(dir, 'direct'), { config: model.config, params: await model.hostParams() });
    for (const file of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'model.safetensors']) {
      assert.deepEqual(await readFile(join(dir, 'byte', file)), await readFile(join(dir, 'direct', file)), file);
    }
    const { files: _files, ...withoutFiles } = tinyChatmlFormat();
    await assert.rejects(new BuiltinPolicy({ model, chatFormat: withoutFiles }).save(join(dir, 'x')), CheckpointError);
  }));
