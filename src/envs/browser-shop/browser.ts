/**
 * The web shop in a real browser: Debian's headless Chromium driven by playwright-core, against
 * the store's HTML server (webshop/server.ts) on 127.0.0.1. `openBrowserShop` starts both once;
 * envs share it (`close()` stops both). Chromium runs headless with no sandbox, no GPU, no QUIC,
 * no background networking, component updates or sync, and a fresh temporary profile.
 */
import type { Browser } from 'playwright-core';
import { BrowserUnavailableError } from '../errors.ts';
import { generateCatalog } from '../webshop/catalog.ts';
import { startShopServer, type ShopServer } from '../webshop/server.ts';
import { Shop } from '../webshop/shop.ts';

/** The Chromium binary: `AGENTRL_CHROMIUM` when set, else Debian's (`apt-get install -y chromium`). */
export const chromiumPath = process.env.AGENTRL_CHROMIUM ?? '/usr/bin/chromium';

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

/** Launches headless Chromium from `chromiumPath`; `BrowserUnavailableError` when it is missing or will not start. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core'); // loaded here, not when agentrl is imported
  try {
    return await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
  } catch (error) {
    throw new BrowserUnavailableError(chromiumPath, error);
  }
}

export interface BrowserShop {
  shop: Shop;
  server: ShopServer;
  browser: Browser;
  close(): Promise<void>;
}

export async function openBrowserShop(options: {
  catalogSeed: number;
  catalogSize: number;
  pageSize: number;
}): Promise<BrowserShop> {
  const shop = new Shop(generateCatalog(options.catalogSeed, options.catalogSize), options.pageSize);
  const server = await startShopServer(shop);
  let browser: Browser;
  try {
    browser = await launchChromium();
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
