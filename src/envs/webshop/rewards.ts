/**
 * The web shop's step reward as named components (issue 31), shared by the text (webshop) and
 * the browser (browser-shop) versions:
 *   R = purchase − formatPenalty · invalid_action
 * `purchase` (outcome): WebShop's score of what was bought, on the buying turn (catalog.ts:
 * category gate × matched attributes, options and price / their count); `invalid_action`
 * (penalty): an action not possible on the page.
 */
import { reward } from '../../rewards/reward.ts';
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import { invalidActionReward } from '../step-reward.ts';

/** What the reward functions see of one shop turn. */
export interface ShopStep {
  invalid: boolean;
  /** WebShop's score of the purchase on the buying turn, else null. */
  purchase: number | null;
}

export function shopRubric(options: { formatPenalty: number }): Rubric<ShopStep> {
  return rubric(
    [reward<ShopStep>('purchase', (step) => step.purchase ?? 0), invalidActionReward<ShopStep>((step) => step.invalid)],
    [1, -options.formatPenalty],
  );
}
