/**
 * `agentrl dpo --model <HF folder>`: the policy `agentrl train --model` builds (backend-setup.ts),
 * in the model's own chat format — a tiny Hugging Face folder (tiny-model-folder.ts) run end to
 * end in a child process; its checkpoint carries the model's tokenizer files, not the byte model's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyChatmlFiles } from '../chat/tiny-chatml.ts';
import { loadCheckpoint } from '../model/checkpoint.ts';
import { RunStore } from '../store/run-store.ts';
import { runCli } from './cli-test-fixture.ts';
import { resolveDpoOptions } from './dpo-command.ts';
import { tinyModelFolder } from './tiny-model-folder.ts';

test("agentrl dpo --model <HF folder>: pure DPO from the model's weights in its own chat format; the checkpoint carries its tokenizer files", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-dpo-model-'));
  try {
    const model = await tinyModelFolder(join(dir, 'model'));
    const out = join(dir, 'out');
    const store = join(dir, 'runs.db');
    const args = [
      'dpo',
      '--env',
      'calculator',
      '--model',
      model,
      '--iterations',
      '1',
      '--tasks-per-iteration',
      '2',
      '--group-size',
      '2',
      '--max-turns',
      '2',
      '--max-new-tokens',
      '8',
      '--test-episodes',
      '2',
      '--validation-episodes',
      '2',
      '--out',
      out,
      '--store',
      store,
      '--run-name',
      'tiny-dpo',
    ];
    const result = await runCli(args);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /dpo: loaded .*model with its own tokenizer \(259 ids\) and chat template "model"; pure RL from these weights \(no SFT warm start\)/,
    );
    assert.doesNotMatch(result.stderr, /warm start on/);
    assert.match(result.stdout, /calculator \/ dpo: held-out test success [\d.]+% before → [\d.]+% after/);

    const files = tinyChatmlFiles();
    assert.deepEqual(JSON.parse(await readFile(join(out, 'final', 'tokenizer.json'), 'utf8')), files.tokenizerJson);
    assert.equal(
      JSON.parse(await readFile(join(out, 'final', 'tokenizer_config.json'), 'utf8')).chat_template,
      files.tokenizerConfig.chat_template,
    );
    assert.deepEqual(
      JSON.parse(await readFile(join(out, 'final', 'generation_config.json'), 'utf8')),
      files.generationConfig,
    );
    const final = await loadCheckpoint(join(out, 'final'));
    assert.equal(final.chatFormat?.name, 'final');
    assert.deepEqual([final.extra.run, final.extra.algo, final.extra.iteration], ['tiny-dpo', 'dpo', 1]);

    const runs = RunStore.open(store);
    try {
      // The env instructions reach a pretrained model as a system message, as for train --model.
      assert.deepEqual([runs.run('tiny-dpo').config.model, runs.run('tiny-dpo').config.systemPrompt], [model, true]);
    } finally {
      runs.close();
    }
    assert.equal(
      resolveDpoOptions(['--env', 'calculator']).options.systemPrompt,
      false,
      'the byte model keeps its default',
    );
    assert.equal(
      resolveDpoOptions(['--model', model, '--system-prompt', 'false']).options.systemPrompt,
      false,
      'a flag overrides the model preset',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
