/**
 * One resolver of model sources (model/model-sources.ts) behind every command that takes a model:
 * `serve-policy`, `gateway`, `export-hf`, `sft`, `train` and `dpo` each accept an agentrl
 * checkpoint, a Hugging Face folder, a .gguf file and a pulled model's name — real child processes
 * of the CLI on tiny fixtures (tiny-model-folder.ts, tiny-gguf-file.ts; the "pulled" model is the
 * tiny GGUF in a temporary `$AGENTRL_CACHE`), real HTTP on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tinyChatmlFiles } from '../chat/tiny-chatml.ts';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint.ts';
import { modelConfigSchema } from '../model/config.ts';
import { modelCacheDir, pulledModelPaths, sameModel } from '../model/model-sources.ts';
import { initHostParams } from '../model/params.ts';
import { runCli, whileServing } from './cli-test-fixture.ts';
import { tinyGgufFile, tinyPulledModel } from './tiny-gguf-file.ts';
import { tinyModelConfig, tinyModelFolder } from './tiny-model-folder.ts';

/** The byte model an agentrl run would have saved. */
const byteConfig = modelConfigSchema.parse({
  hiddenSize: 16,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 32,
  maxSeqLen: 512,
});

interface Source {
  kind: string;
  spec: string;
  /** The chat format a checkpoint written from it carries (undefined: agentrl's byte template). */
  chatFormat: boolean;
  /** The id serve-policy and gateway list by default. */
  modelName: string;
}

let dir = '';
let env: Record<string, string> = {};
let sources: Source[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentrl-model-sources-'));
  env = { AGENTRL_CACHE: join(dir, 'cache') };
  await saveCheckpoint(join(dir, 'byte-run'), { config: byteConfig, params: initHostParams(byteConfig, 5) });
  await tinyPulledModel(env.AGENTRL_CACHE ?? '');
  sources = [
    { kind: 'agentrl checkpoint', spec: join(dir, 'byte-run'), chatFormat: false, modelName: 'byte-run' },
    { kind: 'Hugging Face folder', spec: await tinyModelFolder(join(dir, 'hf')), chatFormat: true, modelName: 'hf' },
    { kind: '.gguf file', spec: await tinyGgufFile(join(dir, 'tiny.gguf')), chatFormat: true, modelName: 'tiny' },
    {
      kind: 'pulled model name',
      spec: 'smollm2-135m-instruct',
      chatFormat: true,
      modelName: 'smollm2-135m-instruct',
    },
  ];
});
after(() => rm(dir, { recursive: true, force: true }));

/** One run per source, all at once (each is a child process). */
async function eachSource(run: (source: Source, index: number) => Promise<void>): Promise<void> {
  await Promise.all(sources.map(run));
}

describe('servers take every kind of model', () => {
  test('serve-policy <model>: lists the model and answers a chat completion', () =>
    eachSource(async (source) => {
      const code = await whileServing(
        ['serve-policy', source.spec, '--port', '0'],
        async (url) => {
          const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] };
          assert.deepEqual(
            models.data.map((model) => model.id),
            [source.modelName],
            source.kind,
          );
          const reply = await fetch(`${url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              model: source.modelName,
              messages: [{ role: 'user', content: 'hi' }],
              max_tokens: 2,
              seed: 1,
            }),
          });
          assert.equal(reply.status, 200, `${source.kind}: ${await reply.clone().text()}`);
          assert.equal(((await reply.json()) as { choices: unknown[] }).choices.length, 1);
        },
        { env },
      );
      assert.equal(code, 0, source.kind);
    }));

  test('gateway <model>: serves it and records into the store', () =>
    eachSource(async (source, index) => {
      const store = join(dir, `gateway-${index}.db`);
      const code = await whileServing(
        ['gateway', source.spec, '--port', '0', '--store', store],
        async (url) => {
          const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] };
          assert.ok(
            models.data.some((model) => model.id === source.modelName),
            source.kind,
          );
        },
        { env },
      );
      assert.equal(code, 0, source.kind);
    }));
});

describe('export-hf and sft take every kind of model', () => {
  test('export-hf <model> --out: the same network, with the model tokenizer files when it has its own', () =>
    eachSource(async (source, index) => {
      const out = join(dir, `export-${index}`);
      const result = await runCli(['export-hf', source.spec, '--out', out], { env });
      assert.equal(result.code, 0, `${source.kind}: ${result.stderr}`);
      const exported = await loadCheckpoint(out);
      assert.ok(sameModel(exported.config, source.chatFormat ? tinyModelConfig : byteConfig), source.kind);
      assert.equal(exported.chatFormat !== undefined, source.chatFormat, source.kind);
    }));

  test('sft --model <model>: trains in the model chat format and saves its tokenizer files', async () => {
    const data = join(dir, 'chat.jsonl');
    const conversation = (answer: string) =>
      JSON.stringify({
        messages: [
          { role: 'user', content: 'Say it.' },
          { role: 'assistant', content: answer },
        ],
      });
    await writeFile(data, `${['a', 'b', 'c', 'd'].map(conversation).join('\n')}\n`);
    await eachSource(async (source, index) => {
      const out = join(dir, `sft-${index}`);
      const flags = ['--steps', '1', '--batch-size', '2', '--held-out-fraction', '0'];
      const result = await runCli(['sft', '--data', data, '--model', source.spec, '--out', out, ...flags], { env });
      assert.equal(result.code, 0, `${source.kind}: ${result.stderr}`);
      assert.match(result.stderr, source.chatFormat ? /in the .+ chat format/ : /in the agentrl chat format/);
      const saved = await loadCheckpoint(out);
      assert.equal(saved.chatFormat !== undefined, source.chatFormat, source.kind);
      if (source.chatFormat)
        assert.deepEqual(
          JSON.parse(await readFile(join(out, 'tokenizer_config.json'), 'utf8')).chat_template,
          tinyChatmlFiles().tokenizerConfig.chat_template,
        );
    });
  });
});

/** A budget that makes `train` and `dpo` take seconds on the tiny models. */
const tinyRun = [
  ['--env', 'bandit', '--iterations', '1', '--tasks-per-iteration', '2', '--group-size', '2'],
  ['--max-turns', '1', '--max-new-tokens', '8', '--test-episodes', '2', '--validation-episodes', '2'],
].flat();

describe('train and dpo take every kind of model', () => {
  for (const command of ['train', 'dpo'] as const)
    test(`${command} --model <model>: starts from its weights, no warm start`, () =>
      eachSource(async (source, index) => {
        const where = ['--out', join(dir, `${command}-${index}`), '--store', join(dir, `${command}-${index}.db`)];
        const extra = command === 'train' ? ['--validate-every', '0', '--checkpoint-every', '0'] : [];
        const result = await runCli([command, '--model', source.spec, ...tinyRun, ...extra, ...where], { env });
        assert.equal(result.code, 0, `${source.kind}: ${result.stderr}`);
        assert.match(result.stderr, /pure RL from these weights \(no SFT warm start\)/, source.kind);
      }));
});

const realGguf = pulledModelPaths('smollm2-135m-instruct', modelCacheDir()).gguf;

test('the real pulled SmolLM2-135M-Instruct: serve-policy smollm2-135m-instruct answers in its chat format', {
  skip: existsSync(realGguf) ? false : `not pulled (${realGguf} is absent; agentrl models pull smollm2-135m-instruct)`,
}, async () => {
  const code = await whileServing(['serve-policy', 'smollm2-135m-instruct', '--port', '0'], async (url) => {
    const reply = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'smollm2-135m-instruct',
        messages: [{ role: 'user', content: 'What is the capital of France?' }],
        max_tokens: 8,
        temperature: 0,
      }),
    });
    assert.equal(reply.status, 200, await reply.clone().text());
    const body = (await reply.json()) as { choices: { message: { content: string } }[] };
    assert.match(body.choices[0]?.message.content ?? '', /Paris/);
  });
  assert.equal(code, 0);
});
