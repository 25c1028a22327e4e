/**
 * The two views of a store page: text (WebShop's simple mode: clickables in brackets) for the
 * text env, and real HTML (links and a search form) served by server.ts. Both show the same
 * clickables with the same labels, so `click[label]` means the same thing in both.
 */
import type { Goal } from './catalog.ts';
import type { Page, Shop } from './shop.ts';

const money = (value: number): string => `$${value.toFixed(2)}`;

export function renderText(shop: Shop, page: Page, goal: Goal, reward?: number): string {
  const lines = [`Instruction: ${goal.instruction}`];
  if (page.kind === 'search') lines.push('[Search]');
  if (page.kind === 'results') {
    const { items, total, pages } = shop.resultsPage(page.query, page.page);
    lines.push(
      `[Back to Search] Page ${page.page}/${pages} (Total results: ${total})${page.page > 1 ? ' [< Prev]' : ''}${page.page < pages ? ' [Next >]' : ''}`,
    );
    for (const item of items) lines.push(`[${item.id}] ${item.title} | ${money(item.price)}`);
  }
  if (page.kind === 'item') {
    const product = shop.product(page.id);
    lines.push('[Back to Search] [< Prev]', product.title, `Price: ${money(product.price)}`);
    for (const [name, values] of Object.entries(product.options)) {
      lines.push(
        `${name}: ${values.map((value) => (page.selected[name] === value ? `[*${value}*]` : `[${value}]`)).join(' ')}`,
      );
    }
    lines.push('[Buy Now]');
  }
  if (page.kind === 'bought') lines.push(`Thank you for shopping with us! Reward: ${(reward ?? 0).toFixed(2)}`);
  return lines.join('\n');
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page as an HTML document; links are relative to `base` (e.g. `/s/abc`). */
export function renderHtml(shop: Shop, page: Page, goal: Goal, base: string, reward?: number): string {
  const link = (href: string, label: string, selected = false): string =>
    `<a href="${escapeHtml(base + href)}"${selected ? ' class="selected" aria-current="true"' : ''}>${escapeHtml(label)}</a>`;
  const body: string[] = [`<p id="instruction">Instruction: ${escapeHtml(goal.instruction)}</p>`];
  if (page.kind === 'search') {
    body.push(
      `<form action="${escapeHtml(base)}/search" method="get" role="search"><input name="q" aria-label="Search" type="text"><button type="submit">Search</button></form>`,
    );
  }
  if (page.kind === 'results') {
    const { items, total, pages } = shop.resultsPage(page.query, page.page);
    const at = (n: number): string => `/search?q=${encodeURIComponent(page.query)}&page=${n}`;
    body.push(
      `<nav>${link('/', 'Back to Search')} ${page.page > 1 ? link(at(page.page - 1), '< Prev') : ''} ${page.page < pages ? link(at(page.page + 1), 'Next >') : ''}</nav>`,
    );
    body.push(`<p>Page ${page.page}/${pages} (Total results: ${total})</p><ul>`);
    for (const item of items)
      body.push(
        `<li>${link(`/item/${item.id}?q=${encodeURIComponent(page.query)}&page=${page.page}`, item.id)} ${escapeHtml(item.title)} | ${money(item.price)}</li>`,
      );
    body.push('</ul>');
  }
  if (page.kind === 'item') {
    const product = shop.product(page.id);
    const query = (selected: Record<string, string>): string =>
      `?q=${encodeURIComponent(page.query)}&page=${page.page}${Object.entries(selected)
        .map(([k, v]) => `&${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
        .join('')}`;
    body.push(
      `<nav>${link('/', 'Back to Search')} ${link(`/search?q=${encodeURIComponent(page.query)}&page=${page.page}`, '< Prev')}</nav>`,
    );
    body.push(`<h1>${escapeHtml(product.title)}</h1><p>Price: ${money(product.price)}</p>`);
    for (const [name, values] of Object.entries(product.options)) {
      const choices = values.map((value) =>
        link(`/item/${product.id}${query({ ...page.selected, [name]: value })}`, value, page.selected[name] === value),
      );
      body.push(`<p>${escapeHtml(name)}: ${choices.join(' ')}</p>`);
    }
    body.push(link(`/buy/${product.id}${query(page.selected)}`, 'Buy Now'));
  }
  if (page.kind === 'bought')
    body.push(`<p id="done">Thank you for shopping with us! Reward: ${(reward ?? 0).toFixed(2)}</p>`);
  return `<!doctype html><html><head><meta charset="utf-8"><title>agentrl shop</title></head><body>${body.join('\n')}</body></html>`;
}
