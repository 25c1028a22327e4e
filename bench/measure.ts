/**
 * Held-out success of a model, measured in a child process (bench/held-out.ts) from a checkpoint
 * saved to a temporary folder, so the figure depends only on the saved weights.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { saveCheckpoint } from '../src/model/checkpoint.ts';
import type { TransformerModel } from '../src/engine/transformer-model.ts';

export interface HeldOut {
  sampled: number;
  greedy: number;
}

export async function measureHeldOut(
  model: TransformerModel,
  env: { name: string; options: Record<string, unknown> },
  evalConfig: Record<string, unknown>,
  samples: number,
): Promise<HeldOut> {
  const dir = mkdtempSync(join(tmpdir(), 'agentrl-bench-'));
  try {
    await saveCheckpoint(dir, { config: model.config, params: await model.hostParams() });
    return measureCheckpoint(dir, env, evalConfig, samples);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Held-out success of the checkpoint in `dir`, in a child process. */
export function measureCheckpoint(
  dir: string,
  env: { name: string; options: Record<string, unknown> },
  evalConfig: Record<string, unknown>,
  samples: number,
): HeldOut {
  const args = [
    '--import',
    'tsx',
    'bench/held-out.ts',
    dir,
    env.name,
    JSON.stringify(env.options),
    JSON.stringify(evalConfig),
  ];
  const child = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    env: { ...process.env, BENCH_SAMPLES: String(samples) },
  });
  if (child.status !== 0) throw new Error(`held-out evaluation failed: ${child.stderr.slice(-2000)}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as HeldOut;
}
