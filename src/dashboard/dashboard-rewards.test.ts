import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunStore } from '../store/run-store.ts';
import { answerApi } from './api.ts';
import { screenshot, twoTurnTrajectory, withDashboardSession } from './dashboard-test-fixture.ts';

const steps = [1, 2, 3, 4];

/** One run with reward components, a failing judge, and two monitor signals (values and fired flags). */
function rewardRun(store: RunStore): void {
  const run = store.createRun({
    command: 'train',
    namePrefix: 'bandit-grpo',
    seed: 1,
    gitCommit: 'abc',
    config: { env: 'bandit' },
  });
  const scored = { ...twoTurnTrajectory(), rewardComponents: { envReward: 1, actionFormat: 0.5 } };
  const failed = {
    ...twoTurnTrajectory(),
    index: 1,
    rewardComponents: { envReward: 0 },
    rewardFailures: { judge: 'JudgeError: 503 after 3 attempts' },
  };
  for (const step of steps) {
    store.recordStep(run.id, {
      step,
      metrics: {
        reward: 0.25 * step,
        'reward/envReward': 0.25 * step,
        'reward/actionFormat': 1 - 0.1 * step,
        'reward/judge/failures': step === 2 ? 2 : 0,
        rewardFailures: step === 2 ? 2 : 0,
        'monitor/entropyCollapse': 0.1 * step,
        'monitor/entropyCollapse/fired': step === 4 ? 1 : 0,
      },
      trajectories: step === 1 ? [scored, failed] : [],
    });
  }
}

test('dashboard: the Rewards panel charts every reward/* and monitor/* series; a trajectory shows its components and failures', async () => {
  await withDashboardSession(rewardRun, async ({ store, open }) => {
    const run = store.runs()[0];
    const api = answerApi(store, [String(run?.id), 'trajectories', '1', '1'], new URLSearchParams()) as Record<
      string,
      unknown
    >;
    assert.deepEqual(api.rewardComponents, { envReward: 0 });
    assert.deepEqual(api.rewardFailures, { judge: 'JudgeError: 503 after 3 attempts' });

    const { page, errors } = await open('/');
    await page.waitForSelector('body[data-ready="true"]');
    const panel = await page
      .locator('#reward-grid figure')
      .evaluateAll((figures) => figures.map((f) => f.getAttribute('data-metric')));
    assert.deepEqual(
      new Set(panel),
      new Set([
        'reward/envReward',
        'reward/actionFormat',
        'reward/judge/failures',
        'rewardFailures',
        'monitor/entropyCollapse',
        'monitor/entropyCollapse/fired',
      ]),
    );
    assert.equal(await page.locator('#no-rewards').isHidden(), true);
    const fired = (await page.evaluate(() =>
      (globalThis as any).agentrlDashboard.plotted('monitor/entropyCollapse/fired'),
    )) as {
      raw: number[];
    }[];
    assert.deepEqual(fired[0]?.raw, [0, 0, 0, 1]);
    assert.match(
      await page.locator('#reward-grid figure[data-metric="reward/judge/failures"] h3').innerText(),
      /judge: episodes it failed on/,
    );
    // The picker groups them too; the main grid keeps its defaults.
    assert.equal(await page.locator('#metric-groups fieldset[data-group="rewards"] label').count(), 4);
    assert.equal(await page.locator('#chart-grid figure[data-metric="reward/envReward"]').count(), 0);

    await page.locator('#trajectory-table tbody tr[data-index="1"] button.view-one').click();
    await page.waitForSelector('#trajectory-view .reward-components tr[data-failure="judge"]');
    assert.match(
      await page.locator('#trajectory-view .reward-components').innerText(),
      /envReward\s+0[\s\S]*judge\s+failed: JudgeError: 503/,
    );
    await page.locator('#trajectory-table tbody tr[data-index="0"] button.view-one').click();
    await page.waitForSelector('#trajectory-view .reward-components tr[data-component="actionFormat"]');
    assert.equal(await page.locator('#trajectory-view .reward-components tr.failure').count(), 0);
    await screenshot(page, 'rewards-panel');
    assert.deepEqual(errors, []);
  });
});

test('dashboard: a run without components says so in the Rewards panel', async () => {
  const plainRun = (store: RunStore) => {
    const run = store.createRun({ command: 'train', seed: 1, gitCommit: null, config: {} });
    store.recordStep(run.id, { step: 1, metrics: { reward: 0.5 } });
  };
  await withDashboardSession(plainRun, async ({ open }) => {
    const { page, errors } = await open('/');
    await page.waitForSelector('body[data-ready="true"]');
    assert.equal(await page.locator('#reward-grid figure').count(), 0);
    assert.equal(await page.locator('#no-rewards').isVisible(), true);
    assert.deepEqual(errors, []);
  });
});
