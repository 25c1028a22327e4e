import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { at } from '../core/indexing.ts';
import type { RunStore } from '../store/run-store.ts';
import { screenshot, twoTurnTrajectory, withDashboardSession } from './dashboard-test-fixture.ts';

const rewardsA = [0.125, 0.25, 0.5, 0.375, 0.75, 0.875];
const rewardsB = [0.5, 0.4375, 0.625];

/** Two runs: A (6 steps, every optimisation metric, two trajectories of one group at step 1), B (3 steps). */
function twoRuns(store: RunStore): void {
  const a = store.createRun({
    command: 'train',
    namePrefix: 'bandit-grpo',
    seed: 1,
    gitCommit: 'abc',
    config: { env: 'bandit', algo: 'grpo', learningRate: 0.002, groupSize: 8 },
  });
  const b = store.createRun({
    command: 'train',
    namePrefix: 'bandit-ppo',
    seed: 1,
    gitCommit: 'abc',
    config: { env: 'bandit', algo: 'ppo', learningRate: 0.002, groupSize: 4 },
  });
  const good = twoTurnTrajectory();
  const bad = {
    ...twoTurnTrajectory(),
    index: 1,
    totalReward: 0,
    success: false,
    advantages: good.advantages!.map((v) => -v),
  };
  store.addCheckpoint(a.id, { step: 0, kind: 'start', path: '/tmp/checkpoints/bandit-grpo-1/start' });
  store.addEvaluation(a.id, { step: 0, split: 'test', episodes: 100, success: 0.25 });
  rewardsA.forEach((reward, i) => {
    store.recordStep(a.id, {
      step: i + 1,
      metrics: {
        reward,
        success: reward,
        kl: 0.01 * i,
        entropy: 1 - 0.1 * i,
        loss: -reward,
        clipfrac: 0.02 * i,
        gradNorm: 1 + i,
        learningRate: 0.002,
        invalidActionRate: 0.5 - 0.05 * i,
        trainedTokens: 100 * (i + 1),
        rolloutTokensPerSecond: 900 + i,
      },
      trajectories: i === 0 ? [good, bad] : [],
      checkpoint: { kind: 'resume' },
    });
  });
  rewardsB.forEach((reward, i) => {
    store.recordStep(b.id, {
      step: i + 1,
      metrics: { reward, success: reward, kl: 0, entropy: 1, loss: 0, trainedTokens: 50, rolloutTokensPerSecond: 800 },
    });
  });
}

type Plotted = { run: string; steps: number[]; xs: number[]; raw: (number | null)[]; smoothed: (number | null)[] }[];
/** The series charted for `metric` (the chart must exist). */
async function plotted(page: Page, metric: string): Promise<Plotted> {
  const series = (await page.evaluate(
    (key) => (globalThis as any).agentrlDashboard.plotted(key),
    metric,
  )) as Plotted | null;
  assert.ok(series !== null, `a chart of ${metric}`);
  return series;
}
/** Where step `x` of a metric's chart is on the page, and the chart's x range and y distribution. */
type ChartGeometry = { left: number; top: number; xMin: number; xMax: number; yDistribution: number };
const geometry = (page: Page, metric: string, x: number) =>
  page.evaluate(([key, xValue]) => (globalThis as any).agentrlDashboard.geometry(key, xValue), [
    metric,
    x,
  ] as const) as Promise<ChartGeometry>;
const swatchColours = (page: Page) =>
  page
    .locator('#run-table tbody tr')
    .evaluateAll((rows) =>
      Object.fromEntries(
        rows.map((r) => [r.getAttribute('data-run'), (r.querySelector('.swatch') as any).style.background]),
      ),
    );

/** Run list, newest first, and the metric picker: every recorded metric offered, the defaults charted. */
async function checkRunListAndMetricPicker(page: Page): Promise<void> {
  // Run list, newest first; both runs selected; each name links to the run.
  assert.deepEqual(
    await page.locator('#run-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run'))),
    ['bandit-ppo-2', 'bandit-grpo-1'],
  );
  assert.equal(await page.locator('#run-table a[href="/runs/bandit-grpo-1"]').count(), 1);

  // The picker offers every recorded metric, grouped; the defaults are charted, the rest one click away.
  const offered = await page
    .locator('#metric-groups label')
    .evaluateAll((labels) => labels.map((l) => l.getAttribute('data-metric')));
  assert.deepEqual(
    new Set(offered),
    new Set([
      'reward',
      'success',
      'invalidActionRate',
      'kl',
      'entropy',
      'loss',
      'clipfrac',
      'gradNorm',
      'learningRate',
      'trainedTokens',
      'rolloutTokensPerSecond',
    ]),
  );
  const charted = () =>
    page.locator('#chart-grid figure').evaluateAll((figures) => figures.map((f) => f.getAttribute('data-metric')));
  assert.deepEqual(await charted(), ['reward', 'success', 'loss', 'kl', 'entropy', 'clipfrac', 'gradNorm']);
  await page.locator('#metric-groups label[data-metric="learningRate"] input').check();
  await page.waitForSelector('#chart-grid figure[data-metric="learningRate"] canvas');
  assert.match(page.url(), /metrics=[^&]*learningRate/);
}

/** The reward chart overlays both runs; the tooltip at step 2 lists both. Returns step 2's position. */
async function checkOverlaidRunsAndTooltip(page: Page): Promise<ChartGeometry> {
  // The reward chart overlays both runs, each with exactly its recorded points.
  const reward = await plotted(page, 'reward');
  assert.deepEqual(
    reward.map((s) => s.run),
    ['bandit-ppo-2', 'bandit-grpo-1'],
  );
  assert.deepEqual(at(reward, 1, 'reward series').steps, [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(at(reward, 1, 'reward series').raw, rewardsA);
  assert.deepEqual(at(reward, 0, 'reward series').raw, rewardsB);
  assert.equal(await page.locator('[data-metric="reward"] canvas').count(), 1);

  // The tooltip at step 2 lists both runs with their values at that step.
  const at2 = await geometry(page, 'reward', 2);
  await page.mouse.move(at2.left, at2.top);
  const tooltip = page.locator('[data-metric="reward"] .tooltip');
  await tooltip.waitFor({ state: 'visible' });
  const rows = await tooltip
    .locator('tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute('data-run'), tr.getAttribute('data-step'), tr.getAttribute('data-value')]),
    );
  assert.deepEqual(rows, [
    ['bandit-ppo-2', '2', String(rewardsB[1])],
    ['bandit-grpo-1', '2', String(rewardsA[1])],
  ]);
  await screenshot(page, 'charts-tooltip');
  return at2;
}

/** Drag-zoom from step 2 to step 4 on the reward chart zooms every chart; a double-click resets. */
async function checkSharedZoom(page: Page, at2: ChartGeometry): Promise<void> {
  // Drag-zoom on one chart zooms all of them; double-click resets.
  const at4 = await geometry(page, 'reward', 4);
  await page.mouse.move(at2.left, at2.top);
  await page.mouse.down();
  await page.mouse.move(at4.left, at4.top, { steps: 4 });
  await page.mouse.up();
  const zoomed = await geometry(page, 'entropy', 3);
  assert.ok(
    Math.abs(zoomed.xMin - 2) < 0.1 && Math.abs(zoomed.xMax - 4) < 0.1,
    `entropy chart follows the zoom: ${zoomed.xMin}..${zoomed.xMax}`,
  );
  await page.mouse.dblclick(at2.left, at2.top);
  const reset = await geometry(page, 'entropy', 3);
  assert.deepEqual([reset.xMin, reset.xMax], [1, 6]);
}

/** Log scale (values ≤ 0 left out) and smoothing (TensorBoard's debiased EMA). */
async function checkLogScaleAndSmoothing(page: Page): Promise<void> {
  // Log scale: y on a log axis; values ≤ 0 (run B's KL is 0) cannot be drawn there and are left out.
  await page.locator('#log-scale').check();
  assert.equal((await geometry(page, 'kl', 3)).yDistribution, 3);
  const kl = await plotted(page, 'kl');
  assert.deepEqual(at(kl, 0, 'kl series').raw, [null, null, null]);
  assert.deepEqual(at(kl, 1, 'kl series').raw, [null, 0.01, 0.02, 0.03, 0.04, 0.05]);
  assert.match(page.url(), /log=1/);
  await page.locator('#log-scale').uncheck();

  // Smoothing: the smoothed line is TensorBoard's debiased EMA of the raw values.
  await page.locator('#smoothing').fill('0.5');
  const smoothed = at(await plotted(page, 'reward'), 1, 'reward series').smoothed;
  const secondSmoothed = at(smoothed, 1, 'smoothed reward');
  assert.ok(
    secondSmoothed !== null && Math.abs(secondSmoothed - (0.5 * 0.5 * 0.125 + 0.5 * 0.25) / 0.75) < 1e-12,
    `debiased EMA: ${secondSmoothed}`,
  );
  assert.equal(smoothed[0], 0.125);
}

/** The token axis, and the held-out evaluations and checkpoints tables. */
async function checkTokenAxisAndTables(page: Page): Promise<void> {
  // Token axis: x is the cumulative token count.
  await page.selectOption('#x-axis', 'tokens');
  assert.deepEqual(at(await plotted(page, 'reward'), 1, 'reward series').xs, [100, 300, 600, 1000, 1500, 2100]);
  assert.match(page.url(), /x=tokens/);

  // Held-out evaluations and checkpoints are shown.
  assert.deepEqual(
    await page
      .locator('#evaluation-table tbody tr')
      .evaluateAll((trs) => trs.map((tr) => (tr as any).innerText.split('\t').slice(0, 5))),
    [['bandit-grpo-1', '0', 'test', '100', '25%']],
  );
  assert.equal(await page.locator('#checkpoint-table tbody tr[data-kind="resume"]').count(), 6);
  assert.match(
    await page.locator('#checkpoint-table tbody tr[data-kind="start"]').innerText(),
    /\/tmp\/checkpoints\/bandit-grpo-1\/start/,
  );
}

test('dashboard charts in headless chromium: every recorded metric in the picker, runs overlaid, tooltip lists every run at a step, zoom, log scale, token axis', async () => {
  await withDashboardSession(twoRuns, async ({ open, url }) => {
    const { page, requested, errors } = await open('/?smooth=0');
    await page.waitForSelector('body[data-ready="true"]');
    await checkRunListAndMetricPicker(page);
    const at2 = await checkOverlaidRunsAndTooltip(page);
    await checkSharedZoom(page, at2);
    await checkLogScaleAndSmoothing(page);
    await checkTokenAxisAndTables(page);

    // Offline: the page fetched only from the dashboard itself.
    assert.ok(requested.length > 0 && requested.every((address) => address.startsWith(url)), requested.join('\n'));
    assert.deepEqual(errors, []);
  });
});

test('dashboard live updates: new steps arrive by ?after=N and extend the charts in place; focus, typing and colours survive refreshes; a new run is listed', async () => {
  await withDashboardSession(twoRuns, async ({ open, store }) => {
    const { page, requested, errors } = await open('/?refresh=250');
    await page.waitForSelector('body[data-ready="true"]');
    const colours = await swatchColours(page);
    const chartCanvas = await page.locator('[data-metric="reward"] canvas').elementHandle();

    // Typing into the metric filter while refreshes run: focus and text stay.
    await page.locator('#metric-filter').focus();
    await page.keyboard.type('grad');
    const refreshes = Number(await page.locator('body').getAttribute('data-refreshes'));
    await page.waitForFunction((n) => Number((globalThis as any).document.body.dataset.refreshes) >= n + 2, refreshes, {
      timeout: 5000,
    });
    assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.id), 'metric-filter');
    assert.equal(await page.locator('#metric-filter').inputValue(), 'grad');
    assert.deepEqual(
      await page
        .locator('#metric-groups label:not([hidden])')
        .evaluateAll((labels) => labels.map((l) => l.getAttribute('data-metric'))),
      ['gradNorm'],
    );

    // A new step of run A and a new run C.
    store.recordStep(1, { step: 7, metrics: { reward: 0.9375, success: 1 } });
    store.createRun({
      command: 'train',
      namePrefix: 'bandit-rloo',
      seed: 2,
      gitCommit: 'abc',
      config: { env: 'bandit', algo: 'rloo' },
    });
    await page.waitForFunction(
      () =>
        (globalThis as any).agentrlDashboard
          .plotted('reward')
          ?.find((s: any) => s.run === 'bandit-grpo-1')
          ?.steps.includes(7),
      null,
      { timeout: 5000 },
    );
    await page.waitForSelector('#run-table tr[data-run="bandit-rloo-3"]', { timeout: 5000 });
    assert.ok(
      requested.some((address) => /\/api\/runs\/1\/metrics\?maxPoints=\d+&after=6$/.test(address)),
      'only the steps after the last one seen are fetched',
    );
    assert.equal(
      await page
        .locator('[data-metric="reward"] canvas')
        .elementHandle()
        .then((handle) => page.evaluate(([a, b]) => a === b, [handle, chartCanvas])),
      true,
      'the chart was updated, not rebuilt',
    );
    // Stable colours: the new run takes its own colour; the others keep theirs. It is listed, not overlaid.
    const after = await swatchColours(page);
    assert.equal(after['bandit-grpo-1'], colours['bandit-grpo-1']);
    assert.equal(after['bandit-ppo-2'], colours['bandit-ppo-2']);
    assert.ok(!Object.values(colours).includes(after['bandit-rloo-3']));
    assert.equal(await page.locator('#run-table tr[data-run="bandit-rloo-3"] input').isChecked(), false);
    assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.id), 'metric-filter');
    assert.deepEqual(errors, []);
  });
});

test('dashboard links: /runs/<name> with metrics and axis in the query opens that view; unknown pages are an HTML 404', async () => {
  await withDashboardSession(twoRuns, async ({ open }) => {
    const { page, errors } = await open('/runs/bandit-grpo-1?metrics=reward,gradNorm&x=seconds&smooth=0.3');
    await page.waitForSelector('body[data-ready="true"]');
    const checked = await page
      .locator('#run-table tbody tr')
      .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-run'), (r.querySelector('input') as any).checked]));
    assert.deepEqual(checked, [
      ['bandit-ppo-2', false],
      ['bandit-grpo-1', true],
    ]);
    assert.deepEqual(
      await page
        .locator('#chart-grid figure')
        .evaluateAll((figures) => figures.map((f) => f.getAttribute('data-metric'))),
      ['reward', 'gradNorm'],
    );
    assert.equal(await page.locator('#x-axis').inputValue(), 'seconds');
    assert.equal(await page.locator('#smoothing').inputValue(), '0.3');
    assert.equal(await page.locator('#trajectory-run').inputValue(), 'bandit-grpo-1');
    // The address now names the whole view, to share it.
    assert.match(
      page.url(),
      /\/\?runs=bandit-grpo-1&metrics=reward,gradNorm&x=seconds&smooth=0\.3&trajectory=bandit-grpo-1\/1\/0$/,
    );
    assert.deepEqual(errors, []);

    const missing = await open('/no/such/page');
    const response = await missing.page.reload();
    assert.equal(response!.status(), 404);
    assert.match(await missing.page.locator('h1').innerText(), /No page here/);
    await missing.page.locator('a[href="/"]').click();
    await missing.page.waitForSelector('body[data-ready="true"]');
  });
});
