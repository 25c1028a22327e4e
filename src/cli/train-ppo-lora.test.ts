/**
 * `agentrl train --algo ppo --lora-rank …`: PPO with LoRA on a tiny Hugging Face folder (random
 * weights, no value head) in a child process. The value head starts at zero and trains beside the
 * adapters; the base weights stay those of the folder; each checkpoint folder holds the merged
 * weights and, under `adapter/`, the PEFT adapter with the head as `modules_to_save`; the run resumes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCheckpoint } from '../model/checkpoint.ts';
import type { HostParams } from '../model/config.ts';
import { loraConfigSchema, mergeLora } from '../model/lora.ts';
import { loadAdapterFolder } from '../model/lora-peft.ts';
import { runCli } from './cli-test-fixture.ts';
import { tinyModelFolder } from './tiny-model-folder.ts';

const lora = loraConfigSchema.parse({ rank: 4, targetModules: ['q_proj', 'v_proj'] });

function ppoLoraArgs(model: string, out: string, store: string): string[] {
  const flags: Record<string, string> = {
    env: 'calculator',
    model,
    algo: 'ppo',
    'lora-rank': String(lora.rank),
    'lora-targets': lora.targetModules.join(','),
    iterations: '1',
    'tasks-per-iteration': '2',
    'group-size': '2',
    'max-turns': '2',
    'max-new-tokens': '8',
    'test-episodes': '2',
    'validation-episodes': '2',
    'validate-every': '0',
    out,
    store,
    'run-name': 'tiny-ppo-lora',
  };
  return ['train', ...Object.entries(flags).flatMap(([flag, value]) => [`--${flag}`, value])];
}

/** The checkpoint folder `dir`: its PEFT adapter (with the value head) and merged weights equal the frozen base + that adapter. */
async function assertCheckpoint(dir: string, base: HostParams): Promise<HostParams> {
  const config = JSON.parse(await readFile(join(dir, 'adapter', 'adapter_config.json'), 'utf8'));
  assert.deepEqual([config.peft_type, config.r, config.modules_to_save], ['LORA', lora.rank, ['v_head']]);
  const { adapters, valueHead } = await loadAdapterFolder(join(dir, 'adapter'));
  assert.ok(valueHead !== undefined, `${dir}/adapter holds the value head`);
  const merged = (await loadCheckpoint(dir)).params;
  const expected = mergeLora(base, adapters, lora);
  for (const [name, tensor] of merged) {
    const want = valueHead.get(name) ?? expected.get(name);
    assert.ok(want !== undefined, `${name}: expected`);
    const off = tensor.data.reduce((worst, x, i) => Math.max(worst, Math.abs(x - want.data[i]!)), 0);
    assert.ok(off < 1e-6, `${dir} ${name}: the base + adapter (off by ${off})`);
  }
  return valueHead;
}

test('agentrl train --algo ppo --lora-rank 4 --model <HF folder>: the value head trains, the base does not, checkpoints hold the PEFT adapter with the head, the run resumes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-ppo-lora-'));
  try {
    const model = await tinyModelFolder(join(dir, 'model'));
    const base = (await loadCheckpoint(model)).params;
    const [out, store] = [join(dir, 'out'), join(dir, 'runs.db')];
    const first = await runCli(ppoLoraArgs(model, out, store));
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /LoRA rank 4 \(alpha 32, dropout 0\) on q_proj,v_proj: 224 adapter parameters trained/);
    const start = await assertCheckpoint(join(out, 'start'), base);
    assert.ok(
      [...start.values()].every((tensor) => tensor.data.every((x) => x === 0)),
      'the head starts at zero',
    );
    const afterOne = await assertCheckpoint(join(out, 'final'), base);
    assert.ok(
      afterOne.get('valueHead.w')!.data.some((x) => x !== 0),
      'one PPO iteration moved the value head',
    );

    const resumed = await runCli(['train', '--resume', 'tiny-ppo-lora', '--store', store, '--iterations', '2']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /train: resuming run tiny-ppo-lora after iteration 1 \(1 to go\)/);
    const afterTwo = await assertCheckpoint(join(out, 'final'), base);
    assert.notDeepEqual(
      afterTwo.get('valueHead.w')!.data,
      afterOne.get('valueHead.w')!.data,
      'iteration 2 trained it on',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
