import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { at } from '../core/indexing.ts';
import type { RunStore } from '../store/run-store.ts';
import { syntheticTrajectory } from '../store/test-data.ts';
import { screenshot, twoTurnTrajectory, withDashboardSession } from './dashboard-test-fixture.ts';

/** Run A: step 1 holds the two-turn episode and its group mate; steps 2–15 two synthetic groups of two. Run B: config only. */
function runsWithTrajectories(store: RunStore): void {
  const a = store.createRun({
    command: 'train',
    namePrefix: 'bandit-grpo',
    seed: 1,
    gitCommit: 'abc',
    config: { env: 'bandit', algo: 'grpo', learningRate: 0.002, groupSize: 8 },
  });
  store.createRun({
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
  store.recordStep(a.id, { step: 1, metrics: { reward: 0.5 }, trajectories: [good, bad] });
  for (let step = 2; step <= 15; step++) {
    const trajectories = [0, 1, 2, 3].map((index) => ({
      ...syntheticTrajectory(step, index, 12),
      groupId: `task-${step}-${index >> 1}`,
      totalReward: index % 2 === 0 ? 1 : 0,
      success: index % 2 === 0,
    }));
    store.recordStep(a.id, { step, metrics: { reward: 0.5 }, trajectories });
  }
}

/** The run's first trajectory: one block per turn plus the prompt; masked tokens plain, trained ones coloured by advantage (Okabe-Ito). */
async function checkTokenColours(page: Page): Promise<void> {
  const trajectory = twoTurnTrajectory();

  // The run's first trajectory is shown: one block per turn plus the prompt; masked and trained tokens differ.
  await page.waitForSelector('#trajectory-view .turn[data-turn="2"]');
  assert.equal(await page.locator('#trajectory-view .turn').count(), 3);
  const tokens = await page.locator('#trajectory-view .tok').evaluateAll((spans) =>
    spans.map((s) => {
      const style = (globalThis as any).getComputedStyle(s);
      return {
        mask: s.getAttribute('data-mask'),
        advantage: s.getAttribute('data-advantage'),
        className: s.className,
        background: style.backgroundColor as string,
        color: style.color as string,
      };
    }),
  );
  assert.equal(tokens.length, trajectory.tokens.length);
  assert.deepEqual(
    tokens.map((t) => Number(t.mask)),
    trajectory.lossMask,
  );
  const masked = tokens.filter((t) => t.mask === '0');
  const positive = tokens.filter((t) => t.mask === '1' && Number(t.advantage) > 0);
  const negative = tokens.filter((t) => t.mask === '1' && Number(t.advantage) < 0);
  assert.ok(masked.length > 0 && positive.length > 0 && negative.length > 0);
  assert.ok(
    masked.every((t) => t.background === 'rgba(0, 0, 0, 0)' && /masked/.test(t.className)),
    'masked tokens have no highlight',
  );
  assert.ok(
    positive.every((t) => /^rgba\(0, 114, 178, /.test(t.background)),
    `positive advantage is Okabe-Ito blue: ${at(positive, 0, 'positive tokens').background}`,
  );
  assert.ok(
    negative.every((t) => /^rgba\(213, 94, 0, /.test(t.background)),
    `negative advantage is Okabe-Ito vermillion: ${at(negative, 0, 'negative tokens').background}`,
  );
  assert.notEqual(
    at(masked, 0, 'masked tokens').color,
    at(positive, 0, 'positive tokens').color,
    'masked text is dimmed',
  );
  assert.match(
    await page.locator('#trajectory-view .turn[data-turn="2"] h4').innerText(),
    /turn 2 · reward 1 · action "Right"/,
  );
}

/** The trajectory list: 58 episodes, 20 a page; the next page; filters by step, success and reward. */
async function checkPagedAndFilteredList(page: Page): Promise<void> {
  // The list: 58 episodes, 20 a page; next page; filters by step and success.
  const listed = () =>
    page
      .locator('#trajectory-table tbody tr')
      .evaluateAll((rows) => rows.map((r) => `${r.getAttribute('data-step')}/${r.getAttribute('data-index')}`));
  assert.match(await page.locator('#page-info').innerText(), /58 trajectories · page 1 of 3/);
  assert.equal((await listed()).length, 20);
  await page.locator('#page-next').click();
  await page.waitForFunction(() =>
    (globalThis as any).document.getElementById('page-info')!.textContent!.includes('page 2 of 3'),
  );
  assert.equal((await listed())[0], '6/2');
  await page.locator('#filter-step').fill('9');
  await page.locator('#filter-step').dispatchEvent('change');
  await page.selectOption('#filter-success', 'false');
  await page.waitForFunction(() =>
    (globalThis as any).document.getElementById('page-info')!.textContent!.startsWith('2 trajectories'),
  );
  assert.deepEqual(await listed(), ['9/1', '9/3']);
  await page.locator('#filter-step').fill('');
  await page.locator('#filter-step').dispatchEvent('change');
  await page.selectOption('#filter-success', '');
  await page.locator('#filter-min-reward').fill('0.5');
  await page.locator('#filter-min-reward').dispatchEvent('change');
  await page.waitForFunction(() =>
    (globalThis as any).document.getElementById('page-info')!.textContent!.startsWith('29 trajectories'),
  );
}

/** A task group side by side: the step-1 group holds both episodes, opposite advantages. */
async function checkGroupSideBySide(page: Page): Promise<void> {
  // A task group side by side: the step-1 group holds both episodes, opposite advantages.
  await page.locator('#filter-min-reward').fill('');
  await page.locator('#filter-min-reward').dispatchEvent('change');
  await page.waitForFunction(() =>
    (globalThis as any).document.getElementById('page-info')!.textContent!.startsWith('58 trajectories'),
  );
  await page.locator('#trajectory-table tr[data-step="1"][data-index="0"] .view-group').click();
  await page.waitForSelector('#trajectory-view.group-grid .group-member[data-index="1"]');
  assert.deepEqual(await page.locator('.group-member > h4').allInnerTexts(), [
    '#0 · reward 1 · success',
    '#1 · reward 0 · no success',
  ]);
  assert.match(
    await page.locator('#trajectory-summary').innerText(),
    /group task-7 · 2 episodes · reward mean 0.500, std 0.500 · 1 succeeded/,
  );
  assert.match(page.url(), /group=bandit-grpo-1\/1\/task-7/);
  await page.locator('#trajectory-summary').scrollIntoViewIfNeeded();
  await screenshot(page, 'trajectory-group');
}

/** Config diff: the two runs side by side, differing keys marked, run metadata shown. */
async function checkConfigDiff(page: Page): Promise<void> {
  // Config diff: the two runs side by side, differing keys marked.
  const differs = await page
    .locator('#config-table tr.differs')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')));
  assert.deepEqual(
    differs.filter((key) => !key!.startsWith('(')),
    ['algo', 'groupSize'],
  );
  assert.equal(await page.locator('#config-table tr[data-key="(git commit)"]').count(), 1, 'run metadata is shown too');
  assert.equal(
    await page.locator('#config-table tr[data-key="learningRate"]').innerText(),
    'learningRate\t0.002\t0.002',
  );
}

test('dashboard trajectories in headless chromium: tokens coloured by mask and advantage (colour-blind safe), paged and filtered list, a group side by side, config diff', async () => {
  await withDashboardSession(runsWithTrajectories, async ({ open }) => {
    const { page, errors } = await open('/runs/bandit-grpo-1');
    await page.waitForSelector('body[data-ready="true"]');
    await checkTokenColours(page);
    await checkPagedAndFilteredList(page);
    await checkGroupSideBySide(page);

    // The group's address opens the same view.
    const linked = await open(new URL(page.url()).pathname + new URL(page.url()).search);
    await linked.page.waitForSelector('body[data-ready="true"]');
    assert.equal(await linked.page.locator('.group-member').count(), 2);
    await checkConfigDiff(page);

    assert.deepEqual([...errors, ...linked.errors], []);
  });
});
