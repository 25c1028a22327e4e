/**
 * The training presets under presets/ (the README names them): each is a config file `agentrl
 * train` reads as written — every key known and valid, the env options the env's own, the STaR
 * hint a hint file — so a preset cannot drift from the flags it sets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeEnv } from '../envs/index.ts';
import { checkStarOptions } from './star-start.ts';
import { resolveTrainOptions } from './train-command.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const presets = readdirSync(join(root, 'presets')).filter((name) => name.endsWith('.yaml'));

test('every presets/*.yaml is a valid agentrl train config: its env options make the env, its STaR hint reads', async () => {
  assert.deepEqual(presets.sort(), ['smollm2-calculator-add.yaml', 'smollm2-calculator-tool.yaml']);
  const cwd = process.cwd();
  process.chdir(root); // the presets name their hint file from the repository root, as the README runs them
  try {
    for (const preset of presets) {
      const { options, sources } = resolveTrainOptions(['--config', join('presets', preset)]);
      assert.equal(options.model, 'smollm2-135m-instruct', preset);
      assert.equal(options.loraRank, 16, preset);
      assert.equal(sources.envOptions, `--config ${join('presets', preset)}`, preset);
      const env = makeEnv(options.env, JSON.parse(options.envOptions));
      const first = await env.reset({ seed: 0 });
      assert.match(first.text, /^What is \d+ [*+] \d+\?/, preset);
      await checkStarOptions(options);
    }
    const tool = resolveTrainOptions(['--config', 'presets/smollm2-calculator-tool.yaml']).options;
    assert.deepEqual([tool.starTasks, tool.starHint], [24, 'presets/calculator-call-turns.jsonl']);
  } finally {
    process.chdir(cwd);
  }
});
