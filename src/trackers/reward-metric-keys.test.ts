import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TensorBoardTracker } from './tensorboard-tracker.ts';

/** The keys the reward components and the monitor add to an iteration's metrics. */
const keys = ['reward/envReward', 'reward/judge/failures', 'rewardFailures', 'monitor/entropyCollapse/fired'];

/**
 * MLflow's own rule for metric names (mlflow/utils/validation.py, `_VALID_PARAM_AND_METRIC_NAMES`:
 * alphanumerics, `_`, `-`, `.`, ` `, `:` and `/`), which its server applies to log-batch; W&B takes
 * any string and groups charts by the part before the first `/`. agentrl has no W&B tracker.
 */
const mlflowMetricName = /^[/\w.\- :]*$/;

test('reward and monitor metric keys are valid MLflow metric names', () => {
  for (const key of keys) assert.match(key, mlflowMetricName);
});

test('TensorBoard: reward/* and monitor/* keys become the event file’s tags as they are (TensorBoard groups tags by their prefix)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-tb-keys-'));
  try {
    const tracker = await TensorBoardTracker.open({ dir, run: { name: 'bandit-grpo-1', config: {} } });
    await tracker.log(1, Object.fromEntries(keys.map((key, i) => [key, i])));
    const [file] = await readdir(join(dir, 'bandit-grpo-1'));
    const bytes = await readFile(join(dir, 'bandit-grpo-1', file ?? ''));
    for (const key of keys) {
      // Summary.Value.tag: field 1, length-delimited: 0x0a, the length, the UTF-8 bytes.
      const tag = Buffer.concat([Buffer.from([0x0a, key.length]), Buffer.from(key)]);
      assert.ok(bytes.includes(tag), `tag ${key} in the event file`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
