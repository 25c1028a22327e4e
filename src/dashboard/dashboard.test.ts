import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../envs/browser-shop/browser.ts';
import { byteTokenizer } from '../model/tokenizer.ts';
import { renderChat } from '../model/chat-template.ts';
import { tokenPieces } from '../model/token-text.ts';
import { messagesFromTokens } from '../policy/scripted-policy.ts';
import { RunStore } from '../store/run-store.ts';
import type { TrajectoryRecord } from '../store/types.ts';
import { startDashboard } from './server.ts';

/** A two-turn episode in the chat template: replies trained on (one good, one bad turn), the rest masked. */
function twoTurnTrajectory(): Omit<TrajectoryRecord, 'step'> {
  const messages = [
    { role: 'user' as const, content: 'P_G' },
    { role: 'assistant' as const, content: '<answer>Left</answer>' },
    { role: 'user' as const, content: '_PG' },
    { role: 'assistant' as const, content: '<answer>Right</answer>' },
    { role: 'user' as const, content: 'done' },
  ];
  const { tokens, assistantMask } = renderChat(messages);
  const spans: [number, number][] = [];
  assistantMask.forEach((m, i) => {
    if (m === 1 && (i === 0 || assistantMask[i - 1] === 0)) spans.push([i, i]);
    if (m === 1) spans.at(-1)![1] = i + 1;
  });
  const advantageOfTurn = [-0.75, 1.25];
  const advantages = tokens.map((_, i) => spans.findIndex(([s, e]) => i >= s && i < e)).map((turn) => (turn < 0 ? 0 : advantageOfTurn[turn]!));
  const rewards = tokens.map((_, i) => (i === spans[1]![1] - 1 ? 1 : 0));
  return {
    index: 0,
    groupId: 'task-7',
    seed: 7,
    totalReward: 1,
    success: true,
    truncated: false,
    messages: messagesFromTokens(tokens, byteTokenizer),
    tokens,
    pieces: tokenPieces(tokens, byteTokenizer),
    lossMask: assistantMask,
    logprobs: assistantMask.map((m) => (m === 1 ? -0.5 : 0)),
    rewards,
    advantages,
    turns: spans.map(([start, end], k) => ({ start, end, reward: k === 1 ? 1 : 0, action: k === 0 ? 'Left' : 'Right', observation: messages[2 * k + 2]!.content, invalidAction: false })),
  };
}

test('dashboard in headless chromium: overlaid charts hold the recorded points, trajectory tokens coloured by mask and advantage, config diff', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-dashboard-'));
  const store = RunStore.open(join(dir, 'agentrl.db'));
  const a = store.createRun({ command: 'train', namePrefix: 'bandit-grpo', seed: 1, gitCommit: 'abc', config: { env: 'bandit', algo: 'grpo', learningRate: 0.002, groupSize: 8 } });
  const b = store.createRun({ command: 'train', namePrefix: 'bandit-ppo', seed: 1, gitCommit: 'abc', config: { env: 'bandit', algo: 'ppo', learningRate: 0.002, groupSize: 4 } });
  const rewardsA = [0.125, 0.25, 0.5, 0.375, 0.75, 0.875];
  const rewardsB = [0.5, 0.4375, 0.625];
  const trajectory = twoTurnTrajectory();
  rewardsA.forEach((reward, i) =>
    store.recordStep(a.id, { step: i + 1, metrics: { reward, success: reward, kl: 0.01 * i, entropy: 1 - 0.1 * i, loss: -reward, rolloutTokensPerSecond: 900 + i }, trajectories: i === 0 ? [trajectory] : [] }),
  );
  rewardsB.forEach((reward, i) => store.recordStep(b.id, { step: i + 1, metrics: { reward, success: reward, kl: 0, entropy: 1, loss: 0, rolloutTokensPerSecond: 800 } }));
  const dashboard = await startDashboard({ store: store.path });
  // Everything started is closed in `finally`, also when Chromium fails to launch (an open server would keep the test process alive).
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(dashboard.url);
    await page.waitForSelector('body[data-ready="true"]');

    // Run list: both runs, newest first.
    assert.deepEqual(await page.locator('#run-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run'))), ['bandit-ppo-2', 'bandit-grpo-1']);

    // The reward chart overlays both runs; each holds exactly its recorded points, in step order.
    const points = await page.locator('[data-metric="reward"] circle.point').evaluateAll((circles) =>
      circles.map((c) => ({ run: c.getAttribute('data-run'), step: Number(c.getAttribute('data-step')), value: Number(c.getAttribute('data-value')), cx: Number(c.getAttribute('cx')), cy: Number(c.getAttribute('cy')) })),
    );
    for (const [name, rewards] of [['bandit-grpo-1', rewardsA], ['bandit-ppo-2', rewardsB]] as const) {
      const mine = points.filter((p) => p.run === name);
      assert.deepEqual(mine.map((p) => [p.step, p.value]), rewards.map((r, i) => [i + 1, r]), `${name} reward points`);
      for (let i = 1; i < mine.length; i++) {
        assert.ok(mine[i]!.cx > mine[i - 1]!.cx, 'x grows with the step');
        assert.equal(Math.sign(mine[i - 1]!.cy - mine[i]!.cy), Math.sign(mine[i]!.value - mine[i - 1]!.value), 'y follows the value');
      }
    }
    assert.equal(await page.locator('[data-metric="reward"] polyline.line').count(), 2);
    for (const metric of ['success', 'kl', 'entropy', 'loss', 'rolloutTokensPerSecond']) {
      assert.equal(await page.locator(`[data-metric="${metric}"] circle.point`).count(), rewardsA.length + rewardsB.length, metric);
    }

    // Trajectory viewer: pick run A; one block per turn plus the prompt; masked and trained tokens differ.
    await page.selectOption('#trajectory-run', String(a.id));
    await page.waitForSelector('#trajectory-view .turn[data-turn="2"]');
    assert.equal(await page.locator('#trajectory-view .turn').count(), 3);
    const tokens = await page.locator('#trajectory-view .tok').evaluateAll((spans) =>
      spans.map((s) => {
        const style = (globalThis as any).getComputedStyle(s);
        return { mask: s.getAttribute('data-mask'), advantage: s.getAttribute('data-advantage'), className: s.className, background: style.backgroundColor as string, color: style.color as string };
      }),
    );
    assert.equal(tokens.length, trajectory.tokens.length);
    assert.deepEqual(tokens.map((t) => Number(t.mask)), trajectory.lossMask);
    const masked = tokens.filter((t) => t.mask === '0');
    const good = tokens.filter((t) => t.mask === '1' && Number(t.advantage) > 0);
    const bad = tokens.filter((t) => t.mask === '1' && Number(t.advantage) < 0);
    assert.ok(masked.length > 0 && good.length > 0 && bad.length > 0);
    assert.ok(masked.every((t) => t.background === 'rgba(0, 0, 0, 0)' && /masked/.test(t.className)), 'masked tokens have no highlight');
    assert.ok(good.every((t) => /^rgba\(22, 163, 74, /.test(t.background)), `positive advantage is green: ${good[0]!.background}`);
    assert.ok(bad.every((t) => /^rgba\(220, 38, 38, /.test(t.background)), `negative advantage is red: ${bad[0]!.background}`);
    assert.notEqual(masked[0]!.color, good[0]!.color, 'masked text is dimmed');
    assert.match(await page.locator('#trajectory-view .turn[data-turn="2"] h4').innerText(), /turn 2 · reward 1 · action "Right"/);

    // Config diff: the two runs side by side, differing keys marked.
    const differs = await page.locator('#config-table tr.differs').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')));
    assert.deepEqual(differs.filter((key) => !key!.startsWith('(')), ['algo', 'groupSize']);
    assert.ok(await page.locator('#config-table tr[data-key="(git commit)"]').count() === 1, 'run metadata is shown too');
    assert.equal(await page.locator('#config-table tr[data-key="learningRate"]').innerText(), 'learningRate\t0.002\t0.002');

    // Offline: the page fetched only from the dashboard itself.
    assert.ok(requested.length > 0 && requested.every((url) => url.startsWith(dashboard.url)), requested.join('\n'));
  } finally {
    await browser?.close();
    await dashboard.close();
    store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('dashboard API: unknown runs and paths are 404 with a message naming the known runs', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-dashboard-'));
  const store = RunStore.open(join(dir, 'agentrl.db'));
  store.createRun({ command: 'train', seed: 0, gitCommit: null, config: {} });
  const dashboard = await startDashboard({ store: store.path });
  try {
    const missing = await fetch(new URL('/api/runs/nope/metrics', dashboard.url));
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { error: string }).error, /no run "nope"; runs: 1 \(train-1\)/);
    assert.equal((await fetch(new URL('/api/runs/1/trajectories/1/0', dashboard.url))).status, 404);
    const runs = (await (await fetch(new URL('/api/runs', dashboard.url))).json()) as { name: string; steps: number }[];
    assert.deepEqual(runs.map((r) => [r.name, r.steps]), [['train-1', 0]]);
    const page = await fetch(dashboard.url);
    assert.match(page.headers.get('content-type')!, /text\/html/);
    assert.doesNotMatch(await page.text(), /https?:\/\//, 'no external resources in the page');
  } finally {
    await dashboard.close();
    store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
