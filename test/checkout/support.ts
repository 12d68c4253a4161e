import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { eventually } from '../support/chain';
import { getHarness } from '../support/harness';

/** A payer's tab on the hosted checkout, with what the test watches from outside the page. */
export interface CheckoutTab {
  page: Page;
  /** Every phase the page showed, in order (from a MutationObserver on main[data-phase]). */
  phases: string[];
  /** Content-Security-Policy violations: the page's own events and Chromium's console reports. */
  cspViolations: string[];
  /** Main-frame navigations after the first load: a live page never reloads. */
  navigations: string[];
}

/**
 * Opens checkout.paymentUrl in the context. The watchers go in through the DevTools protocol (init
 * script, exposed binding), which the page's CSP does not govern: the page's own code stays as served.
 */
export async function openCheckout(context: BrowserContext, paymentId: string): Promise<CheckoutTab> {
  const h = await getHarness();
  const page = await context.newPage();
  const tab: CheckoutTab = { page, phases: [], cspViolations: [], navigations: [] };
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) tab.cspViolations.push(msg.text());
  });
  await page.exposeBinding('__checkoutPhase', (_source, phase: string) => {
    if (tab.phases.at(-1) !== phase) tab.phases.push(phase);
  });
  await page.exposeBinding('__cspViolation', (_source, what: string) => {
    tab.cspViolations.push(what);
  });
  // A string: the test's TypeScript has no DOM types, and this runs in the page.
  await page.addInitScript(`
    document.addEventListener('securitypolicyviolation', (e) => window.__cspViolation(e.violatedDirective + ' ' + e.blockedURI));
    document.addEventListener('DOMContentLoaded', () => {
      const main = document.querySelector('main[data-phase]');
      if (!main) return;
      window.__checkoutPhase(main.getAttribute('data-phase'));
      new MutationObserver(() => window.__checkoutPhase(main.getAttribute('data-phase'))).observe(main, { attributes: true, attributeFilter: ['data-phase'] });
    });
  `);
  const url = `${h.baseUrl}/checkout/${paymentId}`;
  const res = await page.goto(url);
  assert.equal(res?.status(), 200);
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) tab.navigations.push(frame.url());
  });
  return tab;
}

/** Waits (mining blocks and poking the scanner, as the chain moves on its own under npm start) until the page shows the phase. */
export async function untilPhase(tab: CheckoutTab, phase: string, opts: { mine?: boolean } = {}): Promise<void> {
  await eventually(
    (saw) => {
      saw(`the page showed ${tab.phases.join(' → ')}`);
      return tab.phases.includes(phase);
    },
    `the page to show ${phase}`,
    { mine: opts.mine ?? true },
  );
}

/** A page on another origin standing in for the partner's site: returnUrl lands here, and it can post forms to the checkout. */
export async function partnerSite(t: TestContext): Promise<{ url: string; pages: Map<string, string> }> {
  const pages = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    const body = pages.get(req.url?.split('?')[0] ?? '') ?? '<!doctype html><title>Back at the shop</title><p>Back at the shop</p>';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        // Chromium keeps its connections alive: close them, or close() waits for them.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  // localhost, not 127.0.0.1: another site than the checkout's, as a partner's shop is.
  return { url: `http://localhost:${(server.address() as AddressInfo).port}`, pages };
}
