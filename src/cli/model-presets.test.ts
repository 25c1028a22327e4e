/**
 * Pretrained-model presets (model-presets.ts) on both backends: no warm start unless asked, the
 * system prompt and whole conversation, the context from the model's config, a LoRA learning rate
 * from tinker-cookbook's rule; what a pretrained run cannot honour is refused before any work.
 * Before this file, a tinker run from a hub model warm-started 400 SFT steps at lr 3e-3 in a
 * 256-token context with no system prompt and no previous turns.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { tinyChatmlFiles } from '../chat/tiny-chatml.ts';
import { InvalidArgumentError } from '../core/errors.ts';
import { runCli } from './cli-test-fixture.ts';
import { resolveDpoOptions } from './dpo-command.ts';
import { checkPresetOptions, cookbookLoraLearningRate, findModelPreset, modelPresets } from './model-presets.ts';
import { tinkerPolicyOptions } from './tinker-backend.ts';
import { tinyModelFolder } from './tiny-model-folder.ts';
import { resolveTrainOptions, trainHelp } from './train-command.ts';

/** A tokenizer folder as hosted Tinker users download it: tokenizer files, and config.json when `config` is given. */
async function tokenizerFolder(dir: string, config?: Record<string, unknown>): Promise<string> {
  const files = tinyChatmlFiles();
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(files.tokenizerJson));
  await writeFile(join(dir, 'tokenizer_config.json'), JSON.stringify(files.tokenizerConfig));
  if (config !== undefined) await writeFile(join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}

const tinker = ['--env', 'bandit', '--backend', 'tinker', '--base-url', 'http://127.0.0.1:9'];

const refused = (pattern: RegExp) => (error: unknown) =>
  error instanceof InvalidArgumentError && pattern.test(error.message);

test("cookbook's LoRA learning rate: the sweep table for hosted models, the formula 5e-5·10·(2000/H)^P otherwise", () => {
  assert.equal(findModelPreset('Qwen/Qwen3-4B-Instruct-2507')?.loraLearningRate, 1e-3);
  assert.equal(findModelPreset('llama-3.1-8b-instruct')?.loraLearningRate, 3e-4);
  // SmolLM2-135M (Llama family, hidden 576): 5e-4 · (2000/576)^0.781 = 1.3219e-3.
  assert.ok(Math.abs(cookbookLoraLearningRate('llama', 576) - 1.3219e-3) < 1e-7);
  assert.ok(Math.abs(cookbookLoraLearningRate('qwen', 2000) - 5e-4) < 1e-12);
  assert.equal(findModelPreset('no/such-model'), undefined);
  for (const preset of modelPresets) assert.ok(preset.contextWindow >= 8192, preset.name);
});

test('tinker from a hub model: no warm start, system prompt, whole conversation, the preset context and LoRA lr; the short name becomes the hub name', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-preset-'));
  try {
    const folder = await tokenizerFolder(dir);
    const argv = [...tinker, '--base-model', 'qwen3-4b-instruct-2507', '--tokenizer', folder];
    const { options, sources } = resolveTrainOptions(argv);
    assert.deepEqual(
      [options.warmStart, options.systemPrompt, options.historyTurns, options.learningRate, options.maxSeqLen],
      [false, true, 'all', 1e-3, 262_144],
    );
    assert.match(sources.learningRate ?? '', /pretrained-model preset of qwen3-4b-instruct-2507/);
    checkPresetOptions(options, sources);
    const created = tinkerPolicyOptions(options);
    assert.equal(created.baseModel, 'Qwen/Qwen3-4B-Instruct-2507');
    assert.equal(created.contextWindow, 262_144);
    // Flags still win; the warm start runs when asked, and its flags are then taken.
    const asked = resolveTrainOptions([...argv, '--warm-start', '--sft-steps', '5', '--learning-rate', '2e-4']);
    checkPresetOptions(asked.options, asked.sources);
    assert.deepEqual([asked.options.warmStart, asked.options.sftSteps, asked.options.learningRate], [true, 5, 2e-4]);
    // A warm-start flag without --warm-start would be ignored: refused, naming the flag and --warm-start.
    const stray = resolveTrainOptions([...argv, '--sft-steps', '5']);
    assert.throws(
      () => checkPresetOptions(stray.options, stray.sources),
      refused(/--sft-steps configures the SFT warm start.*pass --warm-start too/),
    );
    // DPO takes the same preset.
    const dpo = resolveDpoOptions([...argv.filter((flag) => flag !== 'bandit' && flag !== '--env'), '--env', 'bandit']);
    assert.deepEqual([dpo.options.warmStart, dpo.options.learningRate, dpo.options.maxSeqLen], [false, 1e-3, 262_144]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("tinker from a model the table does not know: its config.json gives the context and the formula's lr; without one the context is refused naming --max-seq-len", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-preset-'));
  try {
    const withConfig = await tokenizerFolder(dir, {
      model_type: 'qwen2',
      hidden_size: 896,
      max_position_embeddings: 32_768,
    });
    const { options, sources } = resolveTrainOptions([
      ...tinker,
      '--base-model',
      'Qwen/Qwen2.5-0.5B',
      '--tokenizer',
      withConfig,
    ]);
    checkPresetOptions(options, sources);
    assert.equal(options.maxSeqLen, 32_768);
    assert.equal(options.learningRate, cookbookLoraLearningRate('qwen', 896));
    assert.equal(tinkerPolicyOptions(options).baseModel, 'Qwen/Qwen2.5-0.5B');
    await rm(join(dir, 'config.json'));
    const bare = resolveTrainOptions([...tinker, '--base-model', 'Qwen/Qwen2.5-0.5B', '--tokenizer', withConfig]);
    assert.throws(
      () => checkPresetOptions(bare.options, bare.sources),
      refused(/does not know the context window of Qwen\/Qwen2\.5-0\.5B: pass --max-seq-len/),
    );
    const sized = resolveTrainOptions([
      ...tinker,
      '--base-model',
      'Qwen/Qwen2.5-0.5B',
      '--tokenizer',
      withConfig,
      '--max-seq-len',
      '4096',
    ]);
    checkPresetOptions(sized.options, sized.sources);
    assert.equal(tinkerPolicyOptions(sized.options).contextWindow, 4096);
    // agentrl's byte model (check:tinker's tiny Llama): the env's preset and the warm start, as before.
    const bytes = resolveTrainOptions([...tinker, '--base-model', '/models/tiny', '--tokenizer', 'bytes']);
    assert.equal(bytes.options.warmStart, undefined);
    assert.equal(bytes.options.historyTurns, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('builtin --model: the same rule (a full fine-tune at a tenth of the LoRA lr); flags a loaded model cannot honour are refused', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-preset-'));
  try {
    const folder = await tinyModelFolder(join(dir, 'model'));
    const argv = ['--env', 'bandit', '--model', folder];
    const full = resolveTrainOptions(argv);
    checkPresetOptions(full.options, full.sources);
    const loraRate = cookbookLoraLearningRate('llama', 16);
    assert.deepEqual(
      [full.options.warmStart, full.options.systemPrompt, full.options.historyTurns],
      [false, true, 'all'],
    );
    assert.ok(Math.abs(full.options.learningRate - loraRate / 10) < 1e-12);
    assert.equal(resolveTrainOptions([...argv, '--lora-rank', '4']).options.learningRate, loraRate);
    for (const [flag, pattern] of [
      ['--hidden-size', /--hidden-size sizes a fresh model; --model .* brings its own config/],
      ['--max-seq-len', /--max-seq-len sizes a fresh model/],
      ['--demonstrations', /--demonstrations configures the SFT warm start.*pass --warm-start too/],
    ] as const) {
      const { options, sources } = resolveTrainOptions([...argv, flag, '64']);
      assert.throws(() => checkPresetOptions(options, sources), refused(pattern), flag);
    }
    const warm = resolveTrainOptions([...argv, '--warm-start', '--demonstrations', '64']);
    checkPresetOptions(warm.options, warm.sources);
    // A folder named after a preset's hub repo takes the preset's learning rate (a tenth: a full fine-tune).
    const named = await tinyModelFolder(join(dir, 'Qwen3-8B'));
    assert.equal(resolveTrainOptions(['--env', 'bandit', '--model', named]).options.learningRate, 1e-4);
    // On tinker a folder is what the server was started with: sent as given, not as the hub name.
    const served = resolveTrainOptions([...tinker, '--base-model', named, '--tokenizer', named]).options;
    assert.equal(tinkerPolicyOptions(served).baseModel, named);
    assert.equal(served.learningRate, 1e-3);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('agentrl train --help shows the preset table', () => {
  const help = trainHelp(['--env', 'bandit']);
  for (const preset of modelPresets)
    assert.ok(help.includes(preset.name) && help.includes(preset.hubName), preset.name);
  assert.match(help, /--warm-start/);
});

test('agentrl train --model <pretrained folder>: no warm start by default; --warm-start runs one on the loaded weights in their own format', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-preset-'));
  try {
    const model = await tinyModelFolder(join(dir, 'model'));
    const flags = (name: string) => [
      'train',
      '--env',
      'bandit',
      '--model',
      model,
      '--iterations',
      '1',
      '--tasks-per-iteration',
      '1',
      '--group-size',
      '2',
      '--max-turns',
      '1',
      '--max-new-tokens',
      '4',
      '--test-episodes',
      '1',
      '--validation-episodes',
      '1',
      '--validate-every',
      '0',
      '--checkpoint-every',
      '0',
      '--store',
      join(dir, 'runs.db'),
      '--out',
      join(dir, name),
      '--run-name',
      name,
    ];
    const plain = await runCli(flags('plain'));
    assert.equal(plain.code, 0, plain.stderr);
    assert.doesNotMatch(plain.stderr, /warm start on/);
    const warm = await runCli([
      ...flags('warm'),
      '--warm-start',
      '--demonstrations',
      '2',
      '--sft-steps',
      '1',
      '--sft-batch-size',
      '2',
    ]);
    assert.equal(warm.code, 0, warm.stderr);
    assert.match(warm.stderr, /train: warm start on 2 expert episodes/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
