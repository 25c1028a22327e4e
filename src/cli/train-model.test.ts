/**
 * `agentrl train --model <HF folder> --lora-rank …`: a tiny Hugging Face folder (the tiny ChatML
 * model's tokenizer and template, random weights) trained end to end in a child process, resumed,
 * and the one-line refusals, checked in-process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyChatmlFiles, tinyChatmlFormat } from '../chat/tiny-chatml.ts';
import { initHostParams } from '../model/params.ts';
import { toHfTensors } from '../model/hf-config.ts';
import { serializeSafetensors } from '../model/safetensors.ts';
import { loadCheckpoint } from '../model/checkpoint.ts';
import { RunStore } from '../store/run-store.ts';
import { checkBackendOptions } from './backend-setup.ts';
import { fieldsOf, parseFlags } from './flags.ts';
import { servePolicyCommandSchema } from './serve-commands.ts';
import { trainCommandSchema } from './train-command.ts';
import { checkRunSetup } from './model-setup.ts';
import { runCli } from './cli-test-fixture.ts';
import { tinyModelConfig as tiny, tinyModelFolder } from './tiny-model-folder.ts';

async function withTempDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-train-model-'));
  try {
    await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The start and final checkpoints under `out` carry the model folder's tokenizer.json, chat template and generation config. */
async function assertCheckpointsCarryTokenizerFiles(out: string): Promise<void> {
  const files = tinyChatmlFiles();
  for (const name of ['start', 'final']) {
    assert.deepEqual(
      JSON.parse(await readFile(join(out, name, 'tokenizer.json'), 'utf8')),
      files.tokenizerJson,
      `${name}/tokenizer.json`,
    );
    assert.equal(
      JSON.parse(await readFile(join(out, name, 'tokenizer_config.json'), 'utf8')).chat_template,
      files.tokenizerConfig.chat_template,
    );
    assert.deepEqual(
      JSON.parse(await readFile(join(out, name, 'generation_config.json'), 'utf8')),
      files.generationConfig,
    );
  }
}

test("agentrl train --model <HF folder> --lora-rank 4: pure RL in the model's format, checkpoints carry its tokenizer files, the run resumes", () =>
  withTempDir(async (dir) => {
    const model = await tinyModelFolder(join(dir, 'model'));
    const out = join(dir, 'out');
    const store = join(dir, 'runs.db');
    const args = [
      'train',
      '--env',
      'calculator',
      '--model',
      model,
      '--lora-rank',
      '4',
      '--lora-targets',
      'q_proj,v_proj',
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
      '--validate-every',
      '0',
      '--out',
      out,
      '--store',
      store,
      '--run-name',
      'tiny-lora',
    ];
    const first = await runCli(args);
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stderr,
      /train: loaded .*model with its own tokenizer \(259 ids\) and chat template "model"; pure RL from these weights \(no SFT warm start\); LoRA rank 4 \(alpha 32, dropout 0\) on q_proj,v_proj: 224 adapter parameters trained/,
    );
    assert.doesNotMatch(first.stderr, /warm start on/);

    await assertCheckpointsCarryTokenizerFiles(out);
    assert.equal((await loadCheckpoint(join(out, 'final'))).chatFormat?.name, 'final');

    const runs = RunStore.open(store);
    try {
      const run = runs.run('tiny-lora');
      assert.deepEqual(
        [run.config.model, run.config.loraRank, run.config.systemPrompt, run.config.historyTurns],
        [model, 4, true, 'all'],
      );
      const trajectory = runs.trajectory(run.id, 1, 0)!;
      const text = tinyChatmlFormat().tokenizer.decode(trajectory.tokens);
      assert.match(
        text,
        /^<\|im_start\|>system\nCompute the integer value[\s\S]*You can call these tools:\n<tools>\n\{"name": "calculator"[\s\S]*<\|im_start\|>user\n\d+ [-+*] \d+<\|im_end\|>\n<\|im_start\|>assistant\n/,
      );
    } finally {
      runs.close();
    }

    const resumed = await runCli(['train', '--resume', 'tiny-lora', '--store', store, '--iterations', '2']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /train: resuming run tiny-lora after iteration 1 \(1 to go\)/);
    assert.match(resumed.stdout, /held-out test success \(sampled\) [\d.]+% before RL → [\d.]+% after 2 iterations/);
  }));

test('one-line refusals: --lora-rank without a model (LoRA with a critic is allowed), a folder without a tokenizer, a tokenizer larger than the vocabulary', () =>
  withTempDir(async (dir) => {
    const builtin = {
      backend: 'builtin' as const,
      tinkerLossReduction: 'sum' as const,
      algo: 'grpo' as const,
      entropyCoef: 0,
      maxGradNorm: 1,
    };
    assert.throws(
      () => checkBackendOptions({ ...builtin, loraRank: 16 }),
      /^InvalidArgumentError: --lora-rank adapts a pretrained model: pass --model/,
    );
    assert.throws(
      () => checkBackendOptions({ ...builtin, loraAlpha: 8 }),
      /--lora-alpha sets up LoRA adapters; pass --lora-rank too/,
    );
    // Before: refused ('a LoRA run trains no value head'); the head now trains beside the adapters (train-ppo-lora.test.ts).
    checkBackendOptions({ ...builtin, algo: 'ppo', loraRank: 16, model: 'm' });
    assert.throws(
      () => checkBackendOptions({ ...builtin, loraRank: 16, model: 'm', loraTargets: 'q_proj,qkv' }),
      /unknown --lora-targets module "qkv"; allowed: q_proj, k_proj/,
    );
    assert.throws(
      () =>
        checkBackendOptions({
          ...builtin,
          backend: 'tinker',
          baseUrl: 'http://x',
          baseModel: 'b',
          maxGradNorm: 0,
          loraRank: 8,
          loraDropout: 0.1,
        }),
      /--lora-dropout sets up the built-in LoRA/,
    );
    checkBackendOptions({ ...builtin, loraRank: 16, init: 'm', loraTargets: 'q_proj, v_proj' });

    const bare = await tinyModelFolder(join(dir, 'bare'), { tokenizer: false });
    await assert.rejects(
      checkRunSetup({ env: 'calculator', envOptions: '{}', model: bare }),
      /bare: no tokenizer\.json; the model's own tokenizer is needed/,
    );
    const small = await tinyModelFolder(join(dir, 'small'));
    const config = JSON.parse(await readFile(join(small, 'config.json'), 'utf8'));
    await writeFile(join(small, 'config.json'), JSON.stringify({ ...config, vocab_size: 200 }));
    await rm(join(small, 'model.safetensors'));
    const smaller = { ...tiny, vocabSize: 200 };
    await writeFile(
      join(small, 'model.safetensors'),
      serializeSafetensors(toHfTensors(smaller, initHostParams(smaller, 3)), { format: 'pt' }),
    );
    await assert.rejects(
      checkRunSetup({ env: 'calculator', envOptions: '{}', model: small }),
      /small: the tokenizer has 259 ids but the model's vocabulary only 200: tokenizer\.json is not this model's/,
    );
    await assert.rejects(
      checkRunSetup({ env: 'calculator', envOptions: '{}', model: small, init: bare }),
      /--init is an alias of --model; pass one of them/,
    );
  }));

test('one engine: --engine is gone from train and serve-policy, refused as an unknown flag', () => {
  for (const schema of [trainCommandSchema, servePolicyCommandSchema]) {
    assert.ok(!fieldsOf(schema).some((field) => field.flag === '--engine'));
    assert.throws(() => parseFlags(schema, ['--engine', 'onnx']), /unknown flag --engine; known flags: /);
  }
});
