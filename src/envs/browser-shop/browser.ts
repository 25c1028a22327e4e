/**
 * The web shop in a real browser: Debian's headless Chromium driven by playwright-core, against
 * the store's HTML server (webshop/server.ts) on 127.0.0.1. `openBrowserShop` starts both once;
 * envs share it (`close()` stops both). Chromium runs headless with no sandbox, no GPU, no QUIC,
 * no background networking, component updates or sync, and a fresh temporary profile.
 */
import { chromium, type Browser } from 'playwright-core';
import { generateCatalog } from '../webshop/catalog.ts';
import { startShopServer, type ShopServer } from '../webshop/server.ts';
import { Shop } from '../webshop/shop.ts';

export const chromiumPath = '/usr/bin/chromium';

export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserShop {
  shop: Shop;
  server: ShopServer;
  browser: Browser;
  close(): Promise<void>;
}

export async function openBrowserShop(options: { catalogSeed: number; catalogSize: number; pageSize: number }): Promise<BrowserShop> {
  const shop = new Shop(generateCatalog(options.catalogSeed, options.catalogSize), options.pageSize);
  const server = await startShopServer(shop);
  let browser: Browser;
  try {
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
  } catch (error) {
    await server.close();
    throw error;
  }
  return {
    shop,
    server,
    browser,
    async close() {
      await browser.close();
      await server.close();
    },
  };
}
