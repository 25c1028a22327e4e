import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigFileError, resolveOptions } from './config-file.ts';
import { trainCommandSchema } from './train-command.ts';
import { at } from '../core/indexing.ts';

async function withFile(name: string, text: string, body: (file: string) => void): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-config-'));
  try {
    const file = join(dir, name);
    await writeFile(file, text);
    body(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function configError(file: string, argv: string[] = []): ConfigFileError {
  try {
    resolveOptions(trainCommandSchema, ['--config', file, ...argv]);
  } catch (error) {
    if (error instanceof ConfigFileError) return error;
    throw error;
  }
  assert.fail('no error');
}

test('config file: YAML values (camelCase or kebab-case keys) under the flags, defaults for the rest', async () => {
  const yaml = [
    '# a run',
    'env: bandit',
    'algo: ppo',
    'learning-rate: 2e-3',
    'envOptions:',
    '  arms: 3',
    'systemPrompt: true',
    '',
  ].join('\n');
  await withFile('run.yaml', yaml, (file) => {
    const { options } = resolveOptions(trainCommandSchema, ['--config', file, '--algo', 'grpo', '--iterations', '3']);
    assert.equal(options.env, 'bandit');
    assert.equal(options.algo, 'grpo', 'the flag overrides the file');
    assert.equal(options.learningRate, 2e-3);
    assert.equal(options.envOptions, '{"arms":3}');
    assert.equal(options.systemPrompt, true);
    assert.equal(options.iterations, 3);
    assert.equal(options.groupSize, 8, 'schema default');
  });
  await withFile('run.json', '{\n  "env": "sokoban",\n  "groupSize": 4\n}\n', (file) => {
    const { options } = resolveOptions(trainCommandSchema, ['--config', file]);
    assert.deepEqual([options.env, options.groupSize], ['sokoban', 4]);
  });
});

test('config file errors name the file, line:column, key, problem and allowed values — all at once', async () => {
  const yaml = ['env: bandit', 'lerningRate: 0.001', 'algo: grp', 'groupSize: -4', 'config: other.yaml', ''].join('\n');
  await withFile('bad.yaml', yaml, (file) => {
    const error = configError(file);
    const lines = error.message.split('\n');
    assert.equal(lines.length, 4, error.message);
    assert.match(
      at(lines, 0),
      new RegExp(
        `^${file}:2:1: lerningRate: unknown key \\(did you mean learningRate\\?\\); allowed keys: env, envOptions, .*learningRate`,
      ),
    );
    assert.match(
      at(lines, 1),
      new RegExp(
        `^${file}:3:7: algo: .*\\(allowed: grpo, dr-grpo, dapo, gspo, cispo, rloo, reinforce\\+\\+, ppo\\); got "grp"$`,
      ),
    );
    assert.match(at(lines, 2), new RegExp(`^${file}:4:12: groupSize: Too small: expected number to be >0; got -4$`));
    assert.match(at(lines, 3), new RegExp(`^${file}:5:1: config: unknown key`));
    assert.deepEqual(
      error.issues.map((i) => [i.line, i.column, i.key]),
      [
        [2, 1, 'lerningRate'],
        [3, 7, 'algo'],
        [4, 12, 'groupSize'],
        [5, 1, 'config'],
      ],
    );
  });
  await withFile('types.json', '{\n  "iterations": "ten",\n  "seed": 1.5\n}\n', (file) => {
    const error = configError(file);
    assert.match(
      error.message,
      new RegExp(
        `^${file}:2:17: iterations: Invalid input: expected number, received string; got "ten"\n${file}:3:11: seed: Invalid input: expected int, received number; got 1.5$`,
      ),
    );
  });
  await withFile('syntax.yaml', 'env: bandit\nalgo: [grpo\n', (file) => {
    assert.match(configError(file).message, new RegExp(`^${file}:\\d+:\\d+: YAML syntax error: `));
  });
  await withFile('list.yaml', '- env\n- bandit\n', (file) => {
    assert.match(configError(file).message, new RegExp(`^${file}:1:1: the file must be a mapping of option: value$`));
  });
  // A bad flag over a good file is named as the flag.
  await withFile('ok.yaml', 'env: bandit\n', (file) => {
    assert.throws(
      () => resolveOptions(trainCommandSchema, ['--config', file, '--algo', 'x']),
      /--algo: .*\(allowed: grpo, /,
    );
  });
});
