import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { closeAtSuiteEnd } from './suite-end';

/**
 * One headless Debian Chromium for the browser suites (hosted checkout, operator console), driven by
 * playwright-core; scripts/setup/chromium.mjs installs it. The background-networking flags keep
 * Chromium from dialling Google's hosts on a closed network; Playwright gives it a fresh, temporary
 * profile. test/index.ts closes it after the last file (an after() here would attach to whichever hook
 * or test launched it first, and close the browser under the next one).
 */
let launched: Promise<Browser> | undefined;

export function getBrowser(): Promise<Browser> {
  if (!launched) closeAtSuiteEnd(closeBrowser);
  launched ??= (async () => {
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    return browser;
  })();
  return launched;
}

export async function closeBrowser(): Promise<void> {
  const browser = await launched?.catch(() => undefined);
  launched = undefined;
  await browser?.close().catch(() => undefined);
}

/** A fresh context (its own cookies) at a viewport: the phone size is a 390×844 iPhone-class screen. */
export async function newContext(size: 'phone' | 'desktop' = 'desktop', opts: { permissions?: string[] } = {}): Promise<BrowserContext> {
  const browser = await getBrowser();
  const viewport = size === 'phone' ? { width: 390, height: 844 } : { width: 1280, height: 900 };
  return browser.newContext({
    viewport,
    deviceScaleFactor: size === 'phone' ? 2 : 1,
    isMobile: size === 'phone',
    hasTouch: size === 'phone',
    permissions: opts.permissions,
  });
}
