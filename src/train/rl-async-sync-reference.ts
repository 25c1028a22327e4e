/**
 * The recorded synchronous run that pins `async: { maxStaleness: 0 }` to the loop as it was before
 * the asynchronous trainer existed: a tiny built-in model on the bandit, 4 iterations of GRPO with
 * KL, clipped gradients and a validation — every non-timing metric and a SHA-256 of the final
 * weights. `rl-async-fixtures/sync-reference.json` was written by this file (run it directly)
 * from the loop of commit ff36640, and re-recorded on the one engine (onnxruntime, issue 28) from
 * the same loop (the old recording still replayed bit for bit on the removed engine just before;
 * the new numbers differ from it by ~1e-6 relative). Bit for bit holds on one machine only:
 * onnxruntime picks its kernels by the CPU (the recording, made on an AVX-512 Xeon, differs on an AMD
 * EPYC by up to ~1e-3 relative in KL-sized metrics). So `replaysSyncLoop` runs the plain synchronous
 * loop beside the variant in the same process (bit for bit: metrics and the final weights' hash) and
 * holds that run to the recording within a tolerance.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { runRl, type IterationMetrics, type RlConfigInput } from './rl.ts';

export const syncReferenceConfig: RlConfigInput = {
  algo: 'grpo',
  iterations: 4,
  tasksPerIteration: 4,
  groupSize: 4,
  maxTurns: 1,
  maxNewTokens: 24,
  learningRate: 2e-3,
  minibatchSize: 4,
  klCoef: 0.05,
  maxGradNorm: 0.05,
  validateEvery: 2,
  validationEpisodes: 4,
  seed: 7,
};

export const syncReferencePath = fileURLToPath(new URL('./rl-async-fixtures/sync-reference.json', import.meta.url));

/** Wall-clock measurements: the only metrics that may differ between two runs. */
const timingKeys = new Set(['seconds', 'rolloutTokensPerSecond', 'trainTokensPerSecond', 'backendMs']);

export interface SyncRecord {
  /** Every metric of every iteration but the timings (non-finite numbers as strings, so JSON keeps them). */
  metrics: Record<string, number | string>[];
  /** SHA-256 of the final weights: names sorted, float32 bytes. */
  weightsSha256: string;
}

/** Runs the reference configuration with `extra` config keys (e.g. `async: { maxStaleness: 0 }`) and records it. */
export async function recordSyncRun(extra: Record<string, unknown> = {}): Promise<SyncRecord> {
  const { model, policy, referencePolicy } = await warmStartedBandit({ sftSteps: 40, demonstrations: 32 });
  const result = await runRl({
    policy,
    reference: referencePolicy,
    env: makeBanditEnv,
    config: { ...syncReferenceConfig, ...extra } as RlConfigInput,
    onWarning: () => {},
  });
  const params = await model.hostParams();
  const hash = createHash('sha256');
  for (const name of [...params.keys()].sort()) {
    const tensor = params.get(name);
    if (tensor === undefined) continue;
    hash.update(name);
    hash.update(new Uint8Array(Float32Array.from(tensor.data).buffer));
  }
  return { metrics: result.history.map(comparableMetrics), weightsSha256: hash.digest('hex') };
}

/** Recorded and live metrics agree within this (relative, with an absolute floor for values near 0). */
const recordingTolerance = { relative: 2e-3, absolute: 1e-6 };

/** The variant (`extra` config keys) is the synchronous loop bit for bit, and that loop still is the recorded one (within `recordingTolerance`). */
export async function replaysSyncLoop(extra: Record<string, unknown>): Promise<void> {
  const variant = await recordSyncRun(extra);
  const plain = await recordSyncRun();
  assert.deepEqual(variant, plain, 'the variant is the synchronous loop bit for bit (this machine)');
  const recorded = JSON.parse(await readFile(syncReferencePath, 'utf8')) as SyncRecord;
  assert.equal(plain.metrics.length, recorded.metrics.length);
  plain.metrics.forEach((metrics, index) => {
    const expected = recorded.metrics[index] ?? {};
    assert.deepEqual(
      Object.keys(metrics).sort(),
      Object.keys(expected).sort(),
      `iteration ${index + 1}: the metric names`,
    );
    for (const [key, value] of Object.entries(metrics)) {
      const want = expected[key];
      if (typeof value === 'string' || typeof want === 'string') {
        assert.equal(value, want, `iteration ${index + 1} ${key}`);
        continue;
      }
      const bound =
        recordingTolerance.absolute + recordingTolerance.relative * Math.max(Math.abs(value), Math.abs(want ?? 0));
      assert.ok(
        Math.abs(value - (want ?? Number.NaN)) <= bound,
        `iteration ${index + 1} ${key}: ${value}, recorded ${want}`,
      );
    }
  });
}

function comparableMetrics(metrics: IterationMetrics): Record<string, number | string> {
  const kept: Record<string, number | string> = {};
  for (const [key, value] of Object.entries(metrics)) {
    if (timingKeys.has(key) || typeof value !== 'number') continue;
    kept[key] = Number.isFinite(value) ? value : String(value);
  }
  return kept;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const record = await recordSyncRun();
  await writeFile(syncReferencePath, `${JSON.stringify(record, null, 1)}\n`);
  console.log(`wrote ${syncReferencePath}`);
}
