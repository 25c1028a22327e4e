/**
 * Serves the store as real HTML on 127.0.0.1 (node:http). Each shopping session has its own goal
 * and lives under `/s/<session>/`; the page is a pure function of the URL:
 *
 *   /s/<id>/                                   search page (a form GET /s/<id>/search?q=…)
 *   /s/<id>/search?q=…&page=n                  results
 *   /s/<id>/item/<product>?q=…&page=n&color=…  product page with the selected options
 *   /s/<id>/buy/<product>?q=…&page=n&color=…   buys: records the session's reward, shows it
 *
 *   const server = await startShopServer(env.shop);
 *   const session = server.createSession(goal);  // → http://127.0.0.1:port/s/<id>/
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { purchaseReward, type Goal } from './catalog.ts';
import { renderHtml } from './render.ts';
import type { Page, Shop } from './shop.ts';

export interface ShopSession {
  id: string;
  url: string;
  goal: Goal;
  /** Set when the session bought something. */
  reward: number | null;
}

export interface ShopServer {
  origin: string;
  createSession(goal: Goal): ShopSession;
  session(id: string): ShopSession | undefined;
  close(): Promise<void>;
}

/** The page a URL path shows, or null when the URL is not a store page. */
export function pageFromUrl(shop: Shop, url: URL, prefix: string): Page | null {
  const path = url.pathname.slice(prefix.length);
  const query = url.searchParams.get('q') ?? '';
  const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
  if (path === '/' || path === '') return { kind: 'search' };
  if (path === '/search')
    return query.trim() === '' ? { kind: 'search' } : { kind: 'results', query: query.trim(), page };
  const [, kind, id] = path.match(/^\/(item|buy)\/([A-Z0-9]+)$/) ?? [];
  const product = id === undefined ? undefined : shop.products.get(id);
  if (product === undefined) return null;
  const selected: Record<string, string> = {};
  for (const [name, values] of Object.entries(product.options)) {
    const value = url.searchParams.get(name);
    if (value !== null && values.includes(value)) selected[name] = value;
  }
  return kind === 'item'
    ? { kind: 'item', id: product.id, query, page, selected }
    : { kind: 'bought', id: product.id, selected };
}

export async function startShopServer(shop: Shop): Promise<ShopServer> {
  const sessions = new Map<string, ShopSession>();
  let origin = '';
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', origin);
    const sessionId = url.pathname.match(/^\/s\/([a-z0-9]+)(\/.*)?$/)?.[1];
    const session = sessionId === undefined ? undefined : sessions.get(sessionId);
    const page = session ? pageFromUrl(shop, url, `/s/${session.id}`) : null;
    if (session === undefined || page === null) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (page.kind === 'bought' && session.reward === null)
      session.reward = purchaseReward(session.goal, shop.product(page.id), page.selected);
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(renderHtml(shop, page, session.goal, `/s/${session.id}`, session.reward ?? 0));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let counter = 0;
  return {
    origin,
    createSession(goal) {
      const id = `s${++counter}`;
      const session: ShopSession = { id, url: `${origin}/s/${id}/`, goal, reward: null };
      sessions.set(id, session);
      return session;
    },
    session: (id) => sessions.get(id),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
