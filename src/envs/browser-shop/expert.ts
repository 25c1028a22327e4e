/**
 * Browser shop expert: the web shop expert's plan (webshop/expert.ts) on the page behind the
 * browser's URL, as GUI actions — `search[q]` becomes `type[q]`, clicks click the link of that
 * name. A random turn clicks a random link (or types a random word of the instruction).
 */
import { formatAnswer } from '../action-format.ts';
import { makeExpert, type Expert, type ExpertOptions } from '../expert.ts';
import { requireData, requirePrivileged } from '../require-data.ts';
import type { WebShopPrivileged } from '../webshop/env.ts';
import { nextShopAction, randomShopAction } from '../webshop/expert.ts';
import type { BrowserShopData } from './env.ts';

const asGui = (action: string): string => action.replace(/^search\[/, 'type[');

export function browserShopExpert(options: ExpertOptions = {}): Expert {
  return makeExpert(
    options,
    (observation) => {
      const { page, links } = requireData<BrowserShopData>(observation, 'browser-shop', 'links');
      const { goal } = requirePrivileged<WebShopPrivileged>(observation, 'browser-shop', 'goal');
      return formatAnswer(asGui(nextShopAction(goal, page ?? { kind: 'search' }, links)));
    },
    (observation, rng) => {
      const { instruction, links } = requireData<BrowserShopData>(observation, 'browser-shop', 'instruction');
      return formatAnswer(asGui(randomShopAction(instruction, links, (items) => rng.pick(items))));
    },
  );
}
