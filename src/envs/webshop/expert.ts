/**
 * Web shop expert: searches the goal's attributes and category, pages through the results to
 * the goal's product, selects each goal option and buys. A random turn clicks a random clickable
 * (or searches a random word of the instruction on the search page).
 */
import { formatAnswer } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import { requireData, requirePrivileged } from '../require-data.ts';
import type { WebShopData, WebShopPrivileged } from './env.ts';
import type { Goal } from './catalog.ts';
import type { Page } from './shop.ts';

/** The next shop action (`search[…]` / `click[…]`) toward the goal, from the page and its clickables. */
export function nextShopAction(goal: Goal, page: Page, clickables: readonly string[]): string {
  if (page.kind === 'search') return `search[${goal.attributes.join(' ')} ${goal.category}]`;
  if (page.kind === 'results') {
    if (clickables.includes(goal.productId)) return `click[${goal.productId}]`;
    return clickables.includes('Next >') ? 'click[Next >]' : 'click[Back to Search]';
  }
  if (page.kind === 'item') {
    if (page.id !== goal.productId) return 'click[< Prev]';
    const missing = Object.entries(goal.options).find(([name, value]) => page.selected[name] !== value);
    return missing === undefined ? 'click[Buy Now]' : `click[${missing[1]}]`;
  }
  return 'click[Back to Search]';
}

/** A random possible shop action. */
export function randomShopAction(
  instruction: string,
  clickables: readonly string[],
  pick: <T>(items: readonly T[]) => T,
): string {
  return clickables.length === 0 ? `search[${pick(instruction.split(' '))}]` : `click[${pick(clickables)}]`;
}

export function webShopExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const { page, clickables } = requireData<WebShopData>(observation, 'webshop', 'page');
      const { goal } = requirePrivileged<WebShopPrivileged>(observation, 'webshop', 'goal');
      return formatAnswer(nextShopAction(goal, page, clickables));
    },
    (observation, rng) => {
      const { instruction, clickables } = requireData<WebShopData>(observation, 'webshop', 'instruction');
      return formatAnswer(randomShopAction(instruction, clickables, (items) => rng.pick(items)));
    },
  );
}
