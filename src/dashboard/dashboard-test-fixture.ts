/** Shared by the dashboard's browser tests: a store in a temp folder, the server, headless Chromium; all closed in `finally`. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { at } from '../core/indexing.ts';
import { launchChromium } from '../envs/browser-shop/browser.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { renderChat } from '../chat/chat-template.ts';
import { tokenPieces } from '../chat/token-text.ts';
import { messagesFromTokens } from '../policy/scripted-policy.ts';
import { RunStore } from '../store/run-store.ts';
import type { TrajectoryRecord } from '../store/types.ts';
import { startDashboard } from './server.ts';

export interface DashboardSession {
  store: RunStore;
  url: string;
  browser: Browser;
  /** A new page, recording every request and uncaught page error (tests assert there are none). */
  open(
    path?: string,
    viewport?: { width: number; height: number },
  ): Promise<{ page: Page; requested: string[]; errors: string[] }>;
}

/** Screenshots go to AGENTRL_DASHBOARD_SCREENSHOTS when set (to look at them), nowhere otherwise. */
export async function screenshot(page: Page, name: string): Promise<void> {
  const folder = process.env.AGENTRL_DASHBOARD_SCREENSHOTS;
  if (folder) await page.screenshot({ path: join(folder, `${name}.png`) });
}

export async function withDashboardSession(
  fill: (store: RunStore) => void,
  body: (session: DashboardSession) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-dashboard-'));
  const store = RunStore.open(join(dir, 'agentrl.db'));
  let dashboard: Awaited<ReturnType<typeof startDashboard>> | undefined;
  let browser: Browser | undefined;
  try {
    fill(store);
    dashboard = await startDashboard({ store: store.path });
    browser = await launchChromium();
    const url = dashboard.url;
    const opened = browser;
    await body({
      store,
      url,
      browser,
      open: async (path = '/', viewport = { width: 1280, height: 900 }) => {
        const page = await opened.newPage({ viewport });
        const requested: string[] = [];
        const errors: string[] = [];
        page.on('request', (request) => requested.push(request.url()));
        page.on('pageerror', (error) => errors.push(error.message));
        await page.goto(new URL(path, url).href);
        return { page, requested, errors };
      },
    });
  } finally {
    await browser?.close();
    await dashboard?.close();
    store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A two-turn episode in the chat template: replies trained on (one good, one bad turn), the rest masked. */
export function twoTurnTrajectory(): Omit<TrajectoryRecord, 'step'> {
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
    if (m === 1) at(spans, spans.length - 1, 'turn spans')[1] = i + 1;
  });
  const advantageOfTurn = [-0.75, 1.25];
  const advantages = tokens
    .map((_, i) => spans.findIndex(([s, e]) => i >= s && i < e))
    .map((turn) => (turn < 0 ? 0 : at(advantageOfTurn, turn, 'turn advantages')));
  const rewards = tokens.map((_, i) => (i === at(spans, 1, 'turn spans')[1] - 1 ? 1 : 0));
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
    turns: spans.map(([start, end], k) => ({
      start,
      end,
      reward: k === 1 ? 1 : 0,
      action: k === 0 ? 'Left' : 'Right',
      observation: at(messages, 2 * k + 2, 'messages').content,
      invalidAction: false,
    })),
  };
}
