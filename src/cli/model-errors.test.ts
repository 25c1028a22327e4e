/**
 * The model errors a newcomer meets, each one line that names the fix (real CLI child processes):
 * a model not pulled yet → `agentrl models pull <name>`, from every command that takes a model;
 * an unknown name → the known ones; a GGUF or Hugging Face folder of an unsupported architecture →
 * the supported ones; a run resumed on another model → both models, and which one to pass.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { modelConfigSchema } from '../model/config.ts';
import { initHostParams } from '../model/params.ts';
import { runCli } from './cli-test-fixture.ts';
import { tinyGgufFile } from './tiny-gguf-file.ts';
import { tinyModelFolder } from './tiny-model-folder.ts';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentrl-model-errors-'));
});
after(() => rm(dir, { recursive: true, force: true }));

/** Every command that takes a model, with `model` in its place. */
function commandsTaking(model: string): string[][] {
  const store = ['--store', join(dir, 'runs.db')];
  return [
    ['serve-policy', model, '--port', '0'],
    ['gateway', model, '--port', '0', ...store],
    ['export-hf', model, '--out', join(dir, 'export')],
    ['sft', '--data', join(dir, 'chat.jsonl'), '--model', model, '--out', join(dir, 'sft')],
    ['train', '--env', 'bandit', '--model', model, ...store],
    ['dpo', '--env', 'bandit', '--model', model, ...store],
  ];
}

test('a known model not pulled yet: every command says to run agentrl models pull <name> (exit 2, one line)', async () => {
  await writeFile(join(dir, 'chat.jsonl'), `${JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })}\n`);
  const env = { AGENTRL_CACHE: join(dir, 'empty-cache') };
  await Promise.all(
    commandsTaking('smollm2-135m-instruct').map(async (args) => {
      const result = await runCli(args, { env });
      assert.equal(result.code, 2, `${args[0]}: ${result.stderr}`);
      assert.match(
        result.stderr.trim(),
        new RegExp(
          `^agentrl ${args[0]}: model "smollm2-135m-instruct" is not pulled yet \\(no .*empty-cache.*\\); run: agentrl models pull smollm2-135m-instruct$`,
        ),
      );
    }),
  );
});

test('an unknown model name lists the known ones and suggests the close one', async () => {
  const result = await runCli(['serve-policy', 'smollm2', '--port', '0']);
  assert.equal(result.code, 2, result.stderr);
  assert.match(
    result.stderr,
    /model "smollm2" is not a file, a folder or a known model \(did you mean smollm2-135m-instruct\?\); known models: smollm2-135m-instruct \(fetch one with: agentrl models pull <name>/,
  );
});

test('a GGUF or a Hugging Face folder of an unsupported architecture names the supported ones', async () => {
  const gguf = await tinyGgufFile(join(dir, 'gemma.gguf'), { architecture: 'gemma2' });
  const folder = await tinyModelFolder(join(dir, 'gpt2'));
  await writeFile(join(folder, 'config.json'), JSON.stringify({ architectures: ['GPT2LMHeadModel'], vocab_size: 264 }));
  for (const args of [
    ['serve-policy', gguf, '--port', '0'],
    ['train', '--env', 'bandit', '--model', gguf, '--store', join(dir, 'runs.db')],
  ]) {
    const result = await runCli(args);
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /gemma\.gguf: general\.architecture gemma2 is not supported; supported: llama, qwen2, qwen3/,
    );
  }
  const result = await runCli(['export-hf', folder, '--out', join(dir, 'out')]);
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    /config\.json: architecture GPT2LMHeadModel is not supported; supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM/,
  );
});

test('a run resumed on another model is refused naming the model it was trained from and the one given', async () => {
  const model = await tinyModelFolder(join(dir, 'tiny'));
  const other = modelConfigSchema.parse({
    hiddenSize: 32,
    numLayers: 2,
    numHeads: 2,
    numKvHeads: 2,
    intermediateSize: 64,
    maxSeqLen: 512,
  });
  await saveCheckpoint(join(dir, 'other'), { config: other, params: initHostParams(other, 1) });
  const store = ['--store', join(dir, 'resume.db')];
  const budget = ['--tasks-per-iteration', '2', '--group-size', '2', '--max-turns', '1', '--max-new-tokens', '8'];
  const tests = ['--test-episodes', '2', '--validation-episodes', '2', '--validate-every', '0'];
  const first = await runCli(
    ['train', '--env', 'bandit', '--model', model, '--iterations', '1', '--run-name', 'tiny', ...budget, ...tests]
      .concat(store)
      .concat(['--out', join(dir, 'resume-run')]),
  );
  assert.equal(first.code, 0, first.stderr);
  const resumed = await runCli([
    'train',
    '--resume',
    'tiny',
    '--iterations',
    '2',
    '--model',
    join(dir, 'other'),
    ...store,
  ]);
  assert.equal(resumed.code, 1, resumed.stderr);
  assert.match(
    resumed.stderr,
    /--model .*other is another model than the run's saved weights: the run was trained from a LlamaForCausalLM: 1 layers, hidden size 16, 2 heads \(1 kv\), vocabulary 264; .*other is a LlamaForCausalLM: 2 layers, hidden size 32, 2 heads \(2 kv\), vocabulary 272\. Resume with the --model the run started from/,
  );
});
