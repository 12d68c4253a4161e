import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import type { Address } from 'viem';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { HTML_AREA_CSP } from '../../src/http/html-area';
import { LIVE_FINALITY_IDLE_STOP_MS, LIVE_FINALITY_POLL_MS } from '../../src/http/dashboard/live-finality';
import type { TTransactionFinality } from '../../src/domain/chain/finality.schemas';
import { call } from '../support/api-client';
import { newContext } from '../support/browser';
import { endsWithBooksChecked } from '../support/books';
import { eventually, legMinedAtHead, mine, newPayer, pokeScanner, receiptOf, withMiningPaused } from '../support/chain';
import { createPayment, newMerchant, waitForPayment, type Merchant } from '../support/fixtures';
import { getHarness } from '../support/harness';
import { until } from '../support/until';
import { assertAccessible, signInByEmail, startDashboardApi } from './support';

const USDC = 1_000_000n;

/** What the page shows of one transaction's bar (read in the page: the test's TypeScript has no DOM types). */
interface BarSeen {
  text: string;
  value: number;
  max: number;
  label: string | null;
  finalized: string | null;
}

async function barOf(page: Page, txHash: string): Promise<BarSeen | null> {
  const li = await page.$(`li[data-tx="${txHash.toLowerCase()}"]`);
  if (!li) return null;
  return li.evaluate((el) => {
    const item = el as unknown as {
      getAttribute(n: string): string | null;
      querySelector(s: string): { value: number; max: number; textContent: string; getAttribute(n: string): string | null };
    };
    const bar = item.querySelector('progress');
    return {
      text: item.querySelector('[data-field="confirmations"]').textContent,
      value: bar.value,
      max: bar.max,
      label: bar.getAttribute('aria-label'),
      finalized: item.getAttribute('data-finalized'),
    };
  });
}

/** What the page's script says of itself: its polling state and its status line. */
async function liveState(page: Page): Promise<{ polling: string | null; status: string; pauseShown: boolean }> {
  return {
    polling: await page.getAttribute('[data-live-finality]', 'data-polling'),
    status: (await page.textContent('[data-field="finality-status"]')) ?? '',
    pauseShown: await page.isVisible('button[data-action="pause"]'),
  };
}

/** The page's own poll moves the bar to `text` (no reload); the chain as it is, the scanner poked. */
async function untilBar(page: Page, txHash: string, text: string, required: number): Promise<BarSeen> {
  return eventually(
    async (saw) => {
      const bar = await barOf(page, txHash);
      saw(bar);
      return bar?.text === text ? bar : undefined;
    },
    `the dashboard's bar of ${txHash} to show "${text}" (of ${required})`,
    { mine: false },
  );
}

/** How many times the page's script has asked for the bars (counted in the page, as each fetch starts). */
const asked = (page: Page) => page.evaluate<number>('window.__finalityAsks');

/** Inside a held chain: the Payment paid in one block, and the API showing it at one confirmation. */
async function payMinedOnce(
  m: Merchant,
  payment: { id: string; funding: { depositAddress: { address: string } } },
  payer: Awaited<ReturnType<typeof newPayer>>,
  amountAtomic: bigint,
) {
  const h = await getHarness();
  const chain = h.chain.chains.get(h.chainId);
  const funding = await chain.signTokenTransfer({
    from: payer,
    token: SANDBOX_TOKEN_ADDRESS,
    to: payment.funding.depositAddress.address as Address,
    amountAtomic,
  });
  await chain.broadcast(funding);
  await mine(1);
  await receiptOf(funding.txHash);
  await pokeScanner();
  await apiTransferAt(m, payment.id, funding.txHash, 1);
  return funding;
}

/** The Payment's finality through the API once its transfer has `n` confirmations (the scanner poked, the chain as it is). */
async function apiTransferAt(m: Merchant, paymentId: string, txHash: string, n: number): Promise<TTransactionFinality> {
  return eventually(
    async (saw) => {
      const res = await call(`/v2/payments/${paymentId}`, { credential: m.cred });
      assert.equal(res.status, 200, res.text);
      const t = (res.body.payment.finality.transfers as TTransactionFinality[]).find((x) => x.transactionHash === txHash.toLowerCase());
      saw(res.body.payment.finality);
      return t?.confirmations === n ? t : undefined;
    },
    `GET /v2/payments/${paymentId} to count ${n} confirmation(s) of ${txHash}`,
    { mine: false },
  );
}

describe('Partner dashboard: live finality bars (Chromium)', () => {
  endsWithBooksChecked();
  let api: Awaited<ReturnType<typeof startDashboardApi>>;
  let m: Merchant;
  let email: string;
  const contexts: BrowserContext[] = [];
  before(async () => {
    api = await startDashboardApi();
    m = await newMerchant();
    email = `viewer-${Date.now()}@partner.example`;
    await api.invite(m.cred.appId, email, 'viewer');
  });
  after(async () => {
    for (const c of contexts) await c.close();
    await api?.close();
  });

  /** A signed-in tab whose clock the test can move (Playwright's, for the whole context), with the script's asks and CSP violations counted. */
  async function signedInTab(): Promise<{ page: Page; cspViolations: string[] }> {
    const context = await newContext('desktop');
    contexts.push(context);
    await context.clock.install();
    const page = await context.newPage();
    const cspViolations: string[] = [];
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
    await page.exposeBinding('__cspViolation', (_source, what: string) => void cspViolations.push(what));
    // Through the DevTools protocol, which the page's CSP does not govern; the page's own script stays as served.
    await page.addInitScript(`
      document.addEventListener('securitypolicyviolation', (e) => window.__cspViolation(e.violatedDirective + ' ' + e.blockedURI));
      window.__finalityAsks = 0;
      const fetchAsServed = window.fetch;
      window.fetch = function (url, init) {
        if (String(url).endsWith('/finality')) window.__finalityAsks += 1;
        return fetchAsServed.call(this, url, init);
      };
    `);
    await signInByEmail(page, api.baseUrl, email);
    return { page, cspViolations };
  }

  test("a Payment's bars count up by themselves as blocks are mined, pause on request, and stop asking once every transaction is final", async () => {
    const h = await getHarness();
    const required = h.chain.chains.network(h.chainId).confirmations;
    assert.equal(required, 2, 'the sandbox network counts two confirmations: the steps below are written for it');
    const { page, cspViolations } = await signedInTab();
    const created = (await createPayment(m, { amount: '3' })).body.payment;
    const payer = await newPayer(3n * USDC);

    await withMiningPaused(async () => {
      const funding = await payMinedOnce(m, created, payer, 3n * USDC);

      // The page as served: one of two confirmations, and the one script its CSP allows, by nonce.
      const res = await page.goto(`${api.baseUrl}/dashboard/payments/${created.id}`);
      assert.equal(res?.status(), 200);
      const csp = res!.headers()['content-security-policy']!;
      const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
      assert.equal(csp, `${HTML_AREA_CSP}; script-src 'nonce-${nonce}'; connect-src 'self'`);
      // Chromium hides a nonce from the attribute once parsed; the element keeps it as a property.
      const scriptNonce = await page.$eval(
        'script[src^="/dashboard/assets/finality.js"]',
        (el) => (el as unknown as { nonce: string }).nonce,
      );
      assert.equal(scriptNonce, nonce);
      assert.deepEqual(await barOf(page, funding.txHash), {
        text: '1 of 2 confirmations',
        value: 1,
        max: 2,
        label: 'Incoming transfer confirmations',
        finalized: 'false',
      });
      assert.deepEqual(await liveState(page), { polling: 'on', status: '', pauseShown: true });
      await assertAccessible(page, 'a Payment page with a live bar');
      const beforeReload = page.url();

      // Paused from the keyboard: no ask however long the page waits; resumed, it asks at once.
      await page.getByRole('button', { name: 'Pause live updates' }).press('Enter');
      assert.equal((await liveState(page)).polling, 'paused');
      const whilePaused = await asked(page);
      await page.clock.runFor(LIVE_FINALITY_POLL_MS * 5);
      assert.equal(await asked(page), whilePaused, 'no ask while paused');
      assert.match((await liveState(page)).status, /Live updates paused/);
      await page.getByRole('button', { name: 'Resume live updates' }).press('Enter');
      assert.equal((await liveState(page)).polling, 'on');
      await until(async () => (await asked(page)) > whilePaused, 'the resumed page to ask again', 5_000);

      // A block: the page's own poll shows two of two, final, and says so.
      await mine(1);
      await pokeScanner();
      assert.deepEqual(await untilBar(page, funding.txHash, '2 of 2 confirmations (final)', required), {
        text: '2 of 2 confirmations (final)',
        value: 2,
        max: 2,
        label: 'Incoming transfer confirmations',
        finalized: 'true',
      });
      assert.match((await liveState(page)).status, /Incoming transfer is final/);

      // The settlement it sends next appears on the page and counts up too, one block at a time.
      const netLeg = await legMinedAtHead({ type: 'payment', id: created.id });
      const netAtOne = await untilBar(page, netLeg, '1 of 2 confirmations', required);
      assert.deepEqual([netAtOne.label, netAtOne.finalized], ['Settlement (net) confirmations', 'false']);
      await mine(1);
      await pokeScanner();
      await untilBar(page, netLeg, '2 of 2 confirmations (final)', required);

      // Once the Payment is at rest and every transaction final, the page stops asking, and says so.
      await waitForPayment(m, created.id, 'succeeded', (p) => p.status === 'succeeded');
      const done = await eventually(
        async (saw) => {
          const state = await liveState(page);
          saw(state);
          return state.polling === 'done' ? state : undefined;
        },
        "the dashboard's page to stop asking once every transaction is final",
        { mine: true },
      );
      assert.deepEqual(done, { polling: 'done', status: 'Every transaction is final: live updates stopped.', pauseShown: false });
      const texts = await page.$$eval('ul.finality [data-field="confirmations"]', (els) => els.map((e) => e.textContent ?? ''));
      assert.equal(texts.length, 4, `the incoming transfer and three settlement legs: ${texts.join(', ')}`);
      for (const t of texts) assert.match(t, /^\d+ of 2 confirmations \(final\)$/);
      const stopped = await asked(page);
      await page.clock.runFor(LIVE_FINALITY_POLL_MS * 10);
      assert.equal(await asked(page), stopped, 'no ask after every transaction is final');
      assert.equal(page.url(), beforeReload, 'never reloaded');
      await assertAccessible(page, 'a Payment page whose bars are all final');
      assert.deepEqual(cspViolations, []);
    });

    // Read again, the page is the plain one: no script, and the dashboard's no-script CSP.
    const again = await page.reload();
    assert.equal(again?.headers()['content-security-policy'], HTML_AREA_CSP);
    assert.equal(await page.locator('script').count(), 0);
    assert.equal(await page.locator('[data-live-finality]').count(), 0);
  });

  test('a page whose bars stay still stops asking after a long while, and says how to look again', async () => {
    const { page, cspViolations } = await signedInTab();
    const created = (await createPayment(m, { amount: '2' })).body.payment;
    const payer = await newPayer(2n * USDC);
    await withMiningPaused(async () => {
      const funding = await payMinedOnce(m, created, payer, 2n * USDC);
      await page.goto(`${api.baseUrl}/dashboard/payments/${created.id}`);
      assert.equal((await liveState(page)).polling, 'on');

      // The chain is held: nothing changes. The page's clock jumps past the idle limit.
      await page.clock.runFor(LIVE_FINALITY_IDLE_STOP_MS + LIVE_FINALITY_POLL_MS);
      const stopped = await eventually(
        async (saw) => {
          const state = await liveState(page);
          saw(state);
          return state.polling === 'stopped' ? state : undefined;
        },
        'the page to stop asking after nothing changed for the idle limit',
        { mine: false },
      );
      assert.deepEqual(stopped, {
        polling: 'stopped',
        status: 'Live updates stopped: nothing changed for 10 minutes. Reload the page to look again.',
        pauseShown: false,
      });
      assert.equal((await barOf(page, funding.txHash))?.text, '1 of 2 confirmations', 'the bar as last read');
      const asks = await asked(page);
      await page.clock.runFor(LIVE_FINALITY_POLL_MS * 10);
      assert.equal(await asked(page), asks, 'no ask after stopping');
      await assertAccessible(page, 'a Payment page whose live updates stopped');
      assert.deepEqual(cspViolations, []);
    });
    // Left to finish as any Payment does, so the books hold nothing in flight for it.
    await waitForPayment(m, created.id, 'succeeded', (p) => p.status === 'succeeded');
  });
});
