/**
 * The store's pages and transitions, shared by the text env, the HTML server and the browser
 * env. Pages: search → results (a page of `pageSize` hits, BM25 via MiniSearch) → item (options
 * to select) → bought. Actions (WebShop): `search[query]` on the search page, `click[label]` on
 * any clickable of the current page (a product id, an option value, `Next >`, `< Prev`,
 * `Back to Search`, `Buy Now`).
 */
import MiniSearch from 'minisearch';
import { UnknownNameError } from '../../core/errors.ts';
import type { Product } from './catalog.ts';

export type Page =
  | { kind: 'search' }
  | { kind: 'results'; query: string; page: number }
  | { kind: 'item'; id: string; query: string; page: number; selected: Record<string, string> }
  | { kind: 'bought'; id: string; selected: Record<string, string> };

export type ShopAction = { kind: 'search'; query: string } | { kind: 'click'; label: string };

export class Shop {
  readonly products: Map<string, Product>;
  private readonly index: MiniSearch<Product>;

  constructor(
    catalog: readonly Product[],
    readonly pageSize = 5,
    readonly maxPages = 5,
  ) {
    this.products = new Map(catalog.map((product) => [product.id, product]));
    this.index = new MiniSearch<Product>({
      fields: ['title', 'category'],
      storeFields: [],
      extractField: (product, field) => String(product[field as keyof Product]),
    });
    this.index.addAll(catalog as Product[]);
  }

  /** The product of an id (a page's, a hit's); throws `UnknownNameError` for an id not in the catalog. */
  product(id: string): Product {
    const product = this.products.get(id);
    if (product === undefined) throw new UnknownNameError('product', id, [...this.products.keys()].slice(0, 10));
    return product;
  }

  /** All hits of a query (at most pageSize × maxPages), best first. */
  hits(query: string): Product[] {
    return this.index
      .search(query, { combineWith: 'OR', prefix: true })
      .slice(0, this.pageSize * this.maxPages)
      .map((hit) => this.product(String(hit.id)));
  }

  /** The products shown on a results page. */
  resultsPage(query: string, page: number): { items: Product[]; total: number; pages: number } {
    const all = this.hits(query);
    return {
      items: all.slice((page - 1) * this.pageSize, page * this.pageSize),
      total: all.length,
      pages: Math.max(1, Math.ceil(all.length / this.pageSize)),
    };
  }

  /** What can be clicked on a page (labels as shown in brackets). */
  clickables(page: Page): string[] {
    if (page.kind === 'search' || page.kind === 'bought') return [];
    if (page.kind === 'results') {
      const { items, pages } = this.resultsPage(page.query, page.page);
      return [
        'Back to Search',
        ...(page.page > 1 ? ['< Prev'] : []),
        ...(page.page < pages ? ['Next >'] : []),
        ...items.map((item) => item.id),
      ];
    }
    const product = this.product(page.id);
    return ['Back to Search', '< Prev', ...Object.values(product.options).flat(), 'Buy Now'];
  }

  /** The next page, or a reason the action is not possible here. */
  transition(page: Page, action: ShopAction): Page | string {
    if (action.kind === 'search') {
      if (page.kind !== 'search') return 'search only on the search page; click[Back to Search] first';
      if (action.query.trim() === '') return 'empty search';
      return { kind: 'results', query: action.query.trim(), page: 1 };
    }
    const label = this.clickables(page).find(
      (candidate) => candidate.toLowerCase() === action.label.trim().toLowerCase(),
    );
    if (label === undefined) return `no "${action.label.slice(0, 20)}" to click here`;
    if (label === 'Back to Search') return { kind: 'search' };
    if (page.kind === 'results') {
      if (label === 'Next >') return { ...page, page: page.page + 1 };
      if (label === '< Prev') return { ...page, page: page.page - 1 };
      return { kind: 'item', id: label, query: page.query, page: page.page, selected: {} };
    }
    if (page.kind !== 'item') return 'nothing to click here';
    if (label === '< Prev') return { kind: 'results', query: page.query, page: page.page };
    if (label === 'Buy Now') return { kind: 'bought', id: page.id, selected: page.selected };
    const option = Object.entries(this.product(page.id).options).find(([, values]) => values.includes(label))?.[0];
    if (option === undefined) return `no "${label.slice(0, 20)}" option to select`;
    return { ...page, selected: { ...page.selected, [option]: label } };
  }
}

/** Reads `search[…]` / `click[…]`; null when it is neither. */
export function parseShopAction(text: string): ShopAction | null {
  const [, verb, argument] = text.trim().match(/^(search|click)\[([\s\S]*)\]$/i) ?? [];
  if (verb === undefined || argument === undefined) return null;
  return verb.toLowerCase() === 'search' ? { kind: 'search', query: argument } : { kind: 'click', label: argument };
}
