import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunStore } from '../store/run-store.ts';
import { screenshot, withDashboardSession } from './dashboard-test-fixture.ts';

const runs = 4;
const steps = 3000;
const metricKeys = [
  'reward',
  'success',
  'validationSuccess',
  'invalidActionRate',
  'responseLength',
  'rewardStdWithinGroup',
  'loss',
  'pgLoss',
  'kl',
  'approxKl',
  'entropy',
  'clipfrac',
  'gradNorm',
  'learningRate',
  'trained',
  'trainedTokens',
  'sampledTokens',
  'rolloutTokensPerSecond',
  'trainTokensPerSecond',
  'seconds',
];

/** 4 runs × 3,000 steps × 20 metrics, values a deterministic function of run, step and key. */
function longRuns(store: RunStore): void {
  for (let r = 1; r <= runs; r++) {
    const run = store.createRun({
      command: 'train',
      namePrefix: `long-${r}`,
      seed: r,
      gitCommit: null,
      config: { algo: 'grpo' },
    });
    store.transaction(() => {
      for (let step = 1; step <= steps; step++) {
        const metrics = Object.fromEntries(
          metricKeys.map((key, k) => [
            key,
            (1 - Math.exp(-step / (300 * r))) * (k + 1) + 0.1 * Math.sin(step * 0.37 + k + r),
          ]),
        );
        store.recordStep(run.id, { step, metrics });
      }
    });
  }
}

test(`dashboard performance: ${runs} runs × ${steps} steps load and respond to clicks fast (the old SVG page took 19 s to load, 40 s per click)`, async (t) => {
  await withDashboardSession(longRuns, async ({ open }) => {
    const started = performance.now();
    const { page, errors } = await open('/');
    await page.waitForSelector('body[data-ready="true"]', { timeout: 20_000 });
    const loaded = performance.now() - started;
    const plotted = await page.evaluate(() =>
      (globalThis as any).agentrlDashboard.plotted('reward').map((s: any) => s.steps.length),
    );
    assert.equal(plotted.length, runs);
    assert.ok(
      plotted.every((n: number) => n >= 1000 && n <= 1500),
      `each run downsampled to at most 1,500 points: ${plotted}`,
    );

    let clicked = performance.now();
    await page.locator('#metric-groups label[data-metric="learningRate"] input').check();
    await page.waitForSelector('#chart-grid figure[data-metric="learningRate"] canvas');
    const pickLatency = performance.now() - clicked;

    clicked = performance.now();
    await page.locator('#run-table tr[data-run="long-1-1"] input').uncheck();
    await page.waitForFunction(() => (globalThis as any).agentrlDashboard.plotted('reward').length === 3);
    const toggleLatency = performance.now() - clicked;

    clicked = performance.now();
    await page.selectOption('#x-axis', 'seconds');
    const axisLatency = performance.now() - clicked;
    await screenshot(page, 'performance-4-runs');

    t.diagnostic(
      `load ${loaded.toFixed(0)} ms (browser start excluded); metric pick ${pickLatency.toFixed(0)} ms; run toggle ${toggleLatency.toFixed(0)} ms; x-axis change ${axisLatency.toFixed(0)} ms`,
    );
    // What keeps it fast is structural (downsampled series above, charts updated in place); these
    // bounds only catch the old behaviour (19 s to load, 40 s a click) on a machine loaded to 4× its
    // cores. Measured: load 2.2 s alone, 7.1 s at load average 7; clicks 0.06–0.44 s.
    assert.ok(loaded < 15_000, `load took ${loaded.toFixed(0)} ms`);
    for (const [what, ms] of [
      ['metric pick', pickLatency],
      ['run toggle', toggleLatency],
      ['x-axis change', axisLatency],
    ] as const)
      assert.ok(ms < 5000, `${what} took ${ms.toFixed(0)} ms`);
    assert.deepEqual(errors, []);
  });
});
