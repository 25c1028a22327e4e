import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from '../core/errors.ts';
import { startDashboard } from '../dashboard/server.ts';
import { RunStore } from '../store/run-store.ts';
import { resolveOptions } from './config-file.ts';
import { parseFlags } from './flags.ts';
import { main } from './main.ts';
import { trainCommandSchema, trainHelp } from './train-command.ts';

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-cli-'));
  try {
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs `agentrl …` in this process with stdout and stderr captured. */
async function agentrl(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const log = console.log;
  const error = console.error;
  let stdout = '';
  let stderr = '';
  console.log = (...parts: unknown[]) => {
    stdout += `${parts.join(' ')}\n`;
  };
  console.error = (...parts: unknown[]) => {
    stderr += `${parts.join(' ')}\n`;
  };
  try {
    return { code: await main(argv), stdout, stderr };
  } finally {
    console.log = log;
    console.error = error;
  }
}

test('flags: a boolean takes --x, --x true, --x false, --x=false and --no-x; any other value is an error listing true/false', () => {
  const parse = (argv: string[]) => resolveOptions(trainCommandSchema, argv).options;
  assert.equal(parse(['--system-prompt', 'false']).systemPrompt, false, '--system-prompt false turns it off');
  assert.equal(parse(['--system-prompt', 'true']).systemPrompt, true);
  assert.equal(
    parse(['--system-prompt', '--seed', '3']).systemPrompt,
    true,
    'a bare --x is on and does not take the next flag',
  );
  assert.equal(
    parse(['--tie-word-embeddings', 'false']).tieWordEmbeddings,
    false,
    '--tie-word-embeddings false is not ignored',
  );
  assert.equal(parse(['--tie-word-embeddings=false']).tieWordEmbeddings, false);
  assert.equal(parse(['--no-stop-at-tag']).stopAtTag, false);
  assert.deepEqual(
    resolveOptions(trainCommandSchema, ['--system-prompt', 'yes']).positional,
    ['yes'],
    'a word after a bare boolean is not its value',
  );
  assert.throws(
    () => parse(['--system-prompt=yes']),
    (e: unknown) =>
      e instanceof InvalidArgumentError && e.message === 'flag --system-prompt takes true or false, got "yes"',
  );
  assert.deepEqual(parseFlags(trainCommandSchema, ['--system-prompt', 'false', 'extra']).positional, ['extra']);
});

test('agentrl train: a stray argument is an error naming it (with the flag it belongs to), before any store or run exists', async () => {
  await withDir(async (dir) => {
    const store = join(dir, 'runs.db');
    const result = await agentrl(['train', 'sokoban', '--store', store]);
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      "agentrl train: unexpected argument 'sokoban' (did you mean --env sokoban?); this command takes only --flags (see --help)\n",
    );
    assert.match(
      (await agentrl(['train', 'ppo', '--store', store])).stderr,
      /unexpected argument 'ppo' \(did you mean --algo ppo\?\)/,
    );
    assert.match(
      (await agentrl(['dpo', 'bandit', '--store', store])).stderr,
      /unexpected argument 'bandit' \(did you mean --env bandit\?\)/,
    );
    assert.ok(!existsSync(store), 'no store was created');
  });
});

test("agentrl train --env sokoban --help shows the sokoban preset's values, each marked with its source", async () => {
  const help = trainHelp(['--env', 'sokoban']);
  assert.match(
    help,
    /values for --env sokoban: its training preset \(src\/train\/env-presets\.ts\) sets envOptions, demonstrations/,
  );
  assert.match(
    help,
    /--learning-rate <number>\s+peak learning rate \(runs 0\.00005 from the sokoban preset; default 0\.0001\)/,
  );
  assert.match(
    help,
    /--sft-steps <number>\s+SFT steps of the warm start \(runs 2000 from the sokoban preset; default 150\)/,
  );
  assert.match(
    help,
    /--algo <grpo\|[^>]*>\s+RL algorithm \(default "grpo"\)/,
    'a value the preset leaves shows its default',
  );
  assert.match(
    trainHelp(['--env', 'sokoban', '--learning-rate', '1e-5']),
    /\(runs 0\.00001 from the command line; default 0\.0001\)/,
  );
  assert.match(trainHelp(['--env', 'bandit']), /--env bandit has no training preset/);
  const printed = await agentrl(['train', '--env', 'sokoban', '--help']);
  assert.equal(printed.code, 0);
  assert.match(printed.stdout, /runs 2000 from the sokoban preset/);
});

test('agentrl train: a typo in the env, an env option, a flag or the --init path fails before a run is created', async () => {
  await withDir(async (dir) => {
    const store = join(dir, 'runs.db');
    // The store exists with one run, so "no new run" is checked against a real store.
    RunStore.open(store).createRun({ command: 'train', name: 'existing', seed: 0, gitCommit: null, config: {} });
    const nullConfig = join(dir, 'null-checkpoint');
    await mkdir(nullConfig);
    await writeFile(join(nullConfig, 'config.json'), 'null\n');
    const cases: [string[], RegExp][] = [
      [['--env', 'sokobn'], /^agentrl train: unknown environment "sokobn"; allowed: frozen-lake, sokoban/],
      [
        ['--env', 'bandit', '--env-options', '{"arm":3}'],
        /^agentrl train: bandit options: ✖ Unrecognized key: "arm"\nallowed options: arms/,
      ],
      [
        ['--env', 'bandit', '--lerning-rate', '1e-3'],
        /^agentrl train: unknown flag --lerning-rate; known flags: --env/,
      ],
      [
        ['--env', 'bandit', '--init', join(dir, 'no-such-checkpoint')],
        /^agentrl train: .*no-such-checkpoint: no such file or folder; a model is a Hugging Face model folder, an agentrl checkpoint folder, a \.gguf file or a pulled model name; known models: smollm2-135m-instruct/,
      ],
      [
        ['--env', 'bandit', '--init', nullConfig],
        /^agentrl train: .*null-checkpoint\/config\.json: holds null, not a model config object; point at a checkpoint folder written by agentrl or a Hugging Face model folder\n$/,
      ],
    ];
    for (const [argv, message] of cases) {
      const result = await agentrl(['train', ...argv, '--store', store]);
      assert.match(result.stderr, message, argv.join(' '));
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
      assert.notEqual(result.code, 0);
    }
    const check = RunStore.open(store, { readonly: true });
    assert.deepEqual(
      check.runs().map((r) => r.name),
      ['existing'],
      'no run was created',
    );
    check.close();
  });
});

test('agentrl dashboard before any run: the missing store is named with what to run (exit 2, nothing created)', async () => {
  await withDir(async (dir) => {
    const store = join(dir, 'runs', 'agentrl.db');
    const result = await agentrl(['dashboard', '--store', store, '--port', '0']);
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      `agentrl dashboard: no run store at ${store} yet: run agentrl train (or dpo, sft, gateway) here first, or pass --store <the runs.db a run wrote>\n`,
    );
    assert.equal(existsSync(store), false);
  });
});

test('agentrl dashboard: a port in use is named, with --port to pick another', async () => {
  await withDir(async (dir) => {
    const store = join(dir, 'runs.db');
    RunStore.open(store).close();
    const first = await startDashboard({ store, port: 0 });
    try {
      const port = new URL(first.url).port;
      const result = await agentrl(['dashboard', '--store', store, '--port', port]);
      assert.equal(result.code, 1);
      assert.equal(
        result.stderr,
        `agentrl dashboard: port ${port} on 127.0.0.1 is in use (another agentrl dashboard, or another program); pass --port <another port>, or --port 0 for any free one\n`,
      );
    } finally {
      await first.close();
    }
  });
});
