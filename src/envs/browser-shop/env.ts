/**
 * Browser shop (GUI agent): the web shop's goals and reward, but the agent drives real headless
 * Chromium. The observation is the page's accessibility tree (playwright's ARIA snapshot of the
 * body: roles and accessible names), the actions are GUI actions:
 *
 *   <answer>click[Next >]</answer>        clicks the link or button with that accessible name
 *   <answer>type[waterproof backpack]</answer>   types into the search box and presses Enter
 *
 * Buying ends the episode with the server's recorded WebShop reward (success = 1). An action on
 * nothing (no such link, no search box) or one the page does not answer within `actionTimeoutMs`
 * is invalid: −formatPenalty. Truncated after `maxTurns`.
 * The browser and the HTML server start on the first reset and are shared by envs made with the
 * same `shared` handle; `close()` stops them when this env started them.
 */
import { z } from 'zod';
import type { Page as BrowserPage } from 'playwright-core';
import {
  EpisodeNotStartedError,
  Rng,
  type Action,
  type Env,
  type Observation,
  type StepResult,
} from '../../core/index.ts';
import { parseAction } from '../action-format.ts';
import { closeTurn, openTurn } from '../episode-turns.ts';
import { parseOptions } from '../options.ts';
import { generateGoal, type Goal } from '../webshop/catalog.ts';
import { webShopOptionsSchema, type WebShopPrivileged } from '../webshop/env.ts';
import { pageFromUrl, type ShopSession } from '../webshop/server.ts';
import type { Page } from '../webshop/shop.ts';
import { openBrowserShop, type BrowserShop } from './browser.ts';
import type { Rubric } from '../../rewards/rubric.ts';
import { scoreStep } from '../step-reward.ts';
import { shopRubric, type ShopStep } from '../webshop/rewards.ts';

export const browserShopOptionsSchema = webShopOptionsSchema.extend({
  /** Time one click or typed search may take (ms). */
  actionTimeoutMs: z.number().int().positive().default(3000),
  /** Time reading the accessibility tree may take (ms); a loaded machine needs a generous one. */
  snapshotTimeoutMs: z.number().int().positive().default(20_000),
  /** Longest observation (characters of the accessibility tree). */
  maxObservationChars: z.number().int().positive().default(1400),
});
export type BrowserShopOptions = z.input<typeof browserShopOptionsSchema>;

/** `observation.data`: what the agent may see — the instruction, the store page behind the URL, the link names. */
export interface BrowserShopData {
  instruction: string;
  /** The URL path and query under the session prefix. */
  path: string;
  page: Page | null;
  links: string[];
}

interface BrowserEpisode {
  goal: Goal;
  session: ShopSession;
  turnsUsed: number;
  ended: boolean;
}

export class BrowserShopEnv implements Env<Goal> {
  readonly name = 'browser-shop';
  readonly instructions =
    'Shop for what the instruction asks in the browser. You see the accessibility tree. Reply <answer>type[query]</answer> to search, ' +
    'or <answer>click[name]</answer> to click a link or button by its name.';
  private readonly options: z.output<typeof browserShopOptionsSchema>;
  private resources: Promise<BrowserShop> | null;
  private readonly ownsResources: boolean;
  private episode: BrowserEpisode | null = null;
  /** R = purchase (outcome) − formatPenalty · invalid_action (penalty): the web shop's rubric (webshop/rewards.ts). */
  readonly rewardComponents: Rubric<ShopStep>;
  /** One tab per env, reused across episodes. */
  private tab: BrowserPage | null = null;

  constructor(options: BrowserShopOptions = {}, shared?: { resources: Promise<BrowserShop> }) {
    this.options = parseOptions(browserShopOptionsSchema, options, 'browser-shop');
    this.rewardComponents = shopRubric(this.options);
    this.resources = shared?.resources ?? null;
    this.ownsResources = shared === undefined;
  }

  async reset({ seed, task }: { seed: number; task?: Goal }): Promise<Observation> {
    this.resources ??= openBrowserShop(this.options);
    const { shop, server, browser } = await this.resources;
    const goal = task ?? generateGoal(new Rng(seed), [...shop.products.values()]);
    const session = server.createSession(goal);
    if (this.tab === null) {
      this.tab = await (await browser.newContext()).newPage();
      this.tab.setDefaultTimeout(this.options.actionTimeoutMs);
    }
    await this.tab.goto(session.url);
    this.episode = { goal, session, turnsUsed: 0, ended: false };
    return this.observe(this.episode);
  }

  async step(action: Action): Promise<StepResult> {
    const episode = openTurn(this.name, this.episode);
    const reason = await this.act(action);
    if (reason === null && episode.session.reward !== null) {
      episode.ended = true;
      const purchase = episode.session.reward;
      return scoreStep(
        this.name,
        this.rewardComponents,
        { invalid: false, purchase },
        {
          observation: await this.observe(episode),
          done: true,
          truncated: false,
          info: { invalidAction: false, success: purchase === 1 },
        },
      );
    }
    const close = closeTurn(episode, this.options.maxTurns, {
      invalidAction: reason !== null,
      ...(reason === null ? {} : { reason }),
    });
    const step = { observation: await this.observe(episode, reason ?? undefined), ...close };
    return scoreStep(this.name, this.rewardComponents, { invalid: reason !== null, purchase: null }, step);
  }

  /** Performs a GUI action; returns why it is invalid, or null. */
  private async act(action: Action): Promise<string | null> {
    const parsed = action.toolCall ? null : parseAction(action.text);
    if (parsed === null || parsed.kind === 'tool_call')
      return 'no tools here; reply <answer>click[name]</answer> or <answer>type[text]</answer>';
    if (parsed.kind === 'invalid') return parsed.reason;
    const [, verbText, targetText = ''] = parsed.answer.match(/^(click|type)\[([\s\S]*)\]$/i) ?? [];
    const target = targetText.trim();
    if (verbText === undefined || target === '') return 'answer must be click[name] or type[text]';
    const verb = verbText.toLowerCase();
    try {
      return await this.perform(verb, target);
    } catch (error) {
      if (error instanceof Error && error.name === 'TimeoutError')
        return `the page did not respond within ${this.options.actionTimeoutMs} ms`;
      throw error;
    }
  }

  private async perform(verb: string, target: string): Promise<string | null> {
    const { tab } = this.started();
    if (verb === 'type') {
      const box = tab.getByRole('textbox', { name: 'Search' });
      if ((await box.count()) === 0) return 'no search box on this page; click[Back to Search] first';
      await box.fill(target);
      await Promise.all([tab.waitForURL(/\/search\?/), box.press('Enter')]);
      return null;
    }
    const link = tab.getByRole('link', { name: target, exact: true });
    const button = tab.getByRole('button', { name: target, exact: true });
    const element = (await link.count()) > 0 ? link.first() : (await button.count()) > 0 ? button.first() : null;
    if (element === null) return `nothing named "${target.slice(0, 20)}" to click`;
    await element.click(); // waits for the navigation the click starts
    await tab.waitForLoadState('load');
    return null;
  }

  private async observe(episode: BrowserEpisode, invalidReason?: string): Promise<Observation> {
    const { goal, session } = episode;
    const { tab, resources } = this.started();
    const { shop } = await resources;
    // link targets (`- /url: …`) carry the session id and say nothing the names do not
    const tree = (await tab.locator('body').ariaSnapshot({ timeout: this.options.snapshotTimeoutMs }))
      .split('\n')
      .filter((line) => !/^\s*- \/url: /.test(line))
      .join('\n');
    const cut =
      tree.length > this.options.maxObservationChars ? `${tree.slice(0, this.options.maxObservationChars - 1)}…` : tree;
    const url = new URL(tab.url());
    const links = await tab.getByRole('link').allInnerTexts();
    const prefix = `/s/${session.id}`;
    const data: BrowserShopData = {
      instruction: goal.instruction,
      path: url.pathname.slice(prefix.length) + url.search,
      page: pageFromUrl(shop, url, prefix),
      links,
    };
    const privileged: WebShopPrivileged = { goal };
    return { text: cut + (invalidReason === undefined ? '' : `\ninvalid: ${invalidReason}`), data, privileged };
  }

  /** The tab and the shop an episode runs on; throws before `reset`. */
  private started(): { tab: BrowserPage; resources: Promise<BrowserShop> } {
    if (this.tab === null || this.resources === null) throw new EpisodeNotStartedError(this.name);
    return { tab: this.tab, resources: this.resources };
  }

  /** Closes the env's tab; stops the browser and server when this env started them. */
  async close(): Promise<void> {
    await this.tab
      ?.context()
      .close()
      .catch(() => {});
    this.tab = null;
    this.episode = null;
    if (this.ownsResources && this.resources !== null) await (await this.resources).close();
    this.resources = null;
  }
}

export function makeBrowserShop(
  options: BrowserShopOptions = {},
  shared?: { resources: Promise<BrowserShop> },
): BrowserShopEnv {
  return new BrowserShopEnv(options, shared);
}
