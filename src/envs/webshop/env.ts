/**
 * Web shop (WebShop-like): find and buy what the instruction asks for in a simulated store.
 * Each turn is `<answer>search[waterproof backpack]</answer>` or `<answer>click[B0XXXXXX]</answer>`
 * (clickables are the bracketed labels of the page: products, option values, `Next >`, `< Prev`,
 * `Back to Search`, `Buy Now`). The observation is the page's text view (render.ts); the same pages
 * are served as HTML by server.ts. Buying ends the episode with WebShop's reward (attribute,
 * option and price match, catalog.ts); success = reward 1. An action not possible on the page is
 * invalid (−formatPenalty); truncated after `maxTurns` turns.
 */
import { z } from 'zod';
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
import { generateCatalog, generateGoal, purchaseReward, type Goal } from './catalog.ts';
import { renderHtml, renderText } from './render.ts';
import { parseShopAction, Shop, type Page } from './shop.ts';
import type { Rubric } from '../../rewards/rubric.ts';
import { scoreStep } from '../step-reward.ts';
import { shopRubric, type ShopStep } from './rewards.ts';

export const webShopOptionsSchema = z.strictObject({
  /** Seed of the generated catalog. */
  catalogSeed: z.number().int().nonnegative().default(3),
  /** Products in the catalog. */
  catalogSize: z.number().int().min(12).max(5000).default(240),
  /** Results per page. */
  pageSize: z.number().int().min(1).max(20).default(5),
  /** Turns per episode. */
  maxTurns: z.number().int().positive().default(15),
  /** Subtracted from the reward of an invalid turn. */
  formatPenalty: z.number().min(0).default(0),
});
export type WebShopOptions = z.input<typeof webShopOptionsSchema>;

/** `observation.data`: what the agent may see — the instruction, the page and its clickables. */
export interface WebShopData {
  instruction: string;
  page: Page;
  clickables: string[];
}

/** `observation.privileged`: the goal behind the instruction, with the product it was made from (for the scripted expert). */
export interface WebShopPrivileged {
  goal: Goal;
}

interface ShopEpisode {
  goal: Goal;
  page: Page;
  turnsUsed: number;
  ended: boolean;
  reward: number;
}

export class WebShopEnv implements Env<Goal> {
  readonly name = 'webshop';
  readonly instructions =
    'Shop for what the instruction asks. Reply <think>...</think><answer>search[query]</answer> on the search page, ' +
    'or <answer>click[label]</answer> with a bracketed label of the page (a product id, an option, Next >, < Prev, Back to Search, Buy Now).';
  readonly shop: Shop;
  private readonly options: z.output<typeof webShopOptionsSchema>;
  private episode: ShopEpisode | null = null;
  /** R = purchase (outcome) − formatPenalty · invalid_action (penalty): rewards.ts. */
  readonly rewardComponents: Rubric<ShopStep>;

  constructor(options: WebShopOptions = {}) {
    this.options = parseOptions(webShopOptionsSchema, options, 'webshop');
    this.rewardComponents = shopRubric(this.options);
    this.shop = new Shop(generateCatalog(this.options.catalogSeed, this.options.catalogSize), this.options.pageSize);
  }

  async reset({ seed, task }: { seed: number; task?: Goal }): Promise<Observation> {
    const goal = task ?? generateGoal(new Rng(seed), [...this.shop.products.values()]);
    this.episode = { goal, page: { kind: 'search' }, turnsUsed: 0, ended: false, reward: 0 };
    return this.observe(this.episode);
  }

  async step(action: Action): Promise<StepResult> {
    const episode = openTurn(this.name, this.episode);
    const parsed = action.toolCall ? null : parseAction(action.text);
    let reason: string;
    if (parsed === null || parsed.kind === 'tool_call')
      reason = 'no tools here; reply <answer>search[...]</answer> or <answer>click[...]</answer>';
    else if (parsed.kind === 'invalid') reason = parsed.reason;
    else {
      const shopAction = parseShopAction(parsed.answer);
      const next =
        shopAction === null
          ? 'answer must be search[...] or click[...]'
          : this.shop.transition(episode.page, shopAction);
      if (typeof next !== 'string') {
        episode.page = next;
        if (next.kind === 'bought') {
          episode.ended = true;
          episode.reward = purchaseReward(episode.goal, this.shop.product(next.id), next.selected);
          return scoreStep(
            this.name,
            this.rewardComponents,
            { invalid: false, purchase: episode.reward },
            {
              observation: this.observe(episode),
              done: true,
              truncated: false,
              info: { invalidAction: false, success: episode.reward === 1 },
            },
          );
        }
        return this.continueOrCut(episode, { invalidAction: false });
      }
      reason = next;
    }
    return this.continueOrCut(episode, { invalidAction: true, reason });
  }

  /** The page as HTML (what server.ts serves), links under `base`. */
  html(base = ''): string {
    if (this.episode === null) throw new EpisodeNotStartedError(this.name);
    return renderHtml(this.shop, this.episode.page, this.episode.goal, base, this.episode.reward);
  }

  private continueOrCut(episode: ShopEpisode, info: { invalidAction: boolean; reason?: string }): Promise<StepResult> {
    const close = closeTurn(episode, this.options.maxTurns, info);
    const step = { observation: this.observe(episode, info.reason), ...close };
    return scoreStep(this.name, this.rewardComponents, { invalid: info.invalidAction, purchase: null }, step);
  }

  private observe(episode: ShopEpisode, invalidReason?: string): Observation {
    const text =
      renderText(this.shop, episode.page, episode.goal, episode.reward) +
      (invalidReason === undefined ? '' : `\ninvalid: ${invalidReason}`);
    const data: WebShopData = {
      instruction: episode.goal.instruction,
      page: episode.page,
      clickables: this.shop.clickables(episode.page),
    };
    const privileged: WebShopPrivileged = { goal: episode.goal };
    return { text, data, privileged };
  }
}

export function makeWebShop(options: WebShopOptions = {}): WebShopEnv {
  return new WebShopEnv(options);
}
