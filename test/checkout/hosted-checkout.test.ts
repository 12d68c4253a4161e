import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';
import { CHECKOUT_CSP } from '../../src/http/routes/checkout';
import { call } from '../support/api-client';
import { newContext } from '../support/browser';
import { runCli } from '../support/cli';
import { eventually, mine, paysInToken, pokeScanner, sendOnHeldChain } from '../support/chain';
import { createChainFaults } from '../../src/chain/chain-faults';
import { SANDBOX_DEPLOYER } from '../../src/chain/sandbox';
import { getHarness } from '../support/harness';
import { awaitWorkflowResult } from '../support/workflow-result';
import { endsWithBooksChecked } from '../support/books';
import { eventNames, newMerchant, waitForPayment, type Merchant, newPayment } from '../support/fixtures';
import { openCheckout, partnerSite, untilPhase, type CheckoutTab } from './support';

/** The page's confirmations bar (an accessible <progress> and its text) at n of required, with no reload; the chain as it is. */
async function untilBar(tab: CheckoutTab, n: number, required: number): Promise<void> {
  const text = `${n} of ${required} confirmations`;
  await eventually(
    async (saw) => {
      const bar = await tab.page.$eval('[data-field="confirmations-bar"]', (el) => {
        // Read in the page: the DOM's own types are not this project's (no "dom" lib).
        const p = el as unknown as {
          value: number;
          max: number;
          getAttribute(n: string): string | null;
          closest(s: string): { hidden: boolean };
        };
        return { value: p.value, max: p.max, label: p.getAttribute('aria-labelledby'), hidden: p.closest('section').hidden };
      });
      const shown = await tab.page.textContent('[data-field="confirmations-text"]');
      saw({ bar, shown });
      return (
        !bar.hidden && shown === text && bar.value === Math.min(n, required) && bar.max === required && bar.label === 'confirmations-text'
      );
    },
    `the bar to show ${text}`,
    { mine: false },
  );
}

/** `sandbox pay` for the Payment, its blocks mined and then the chain held (sendOnHeldChain): release() in a finally. */
function sandboxPayOnHeldChain(paymentId: string, escrow: string, what: string) {
  return sendOnHeldChain(
    () => runCli(['sandbox', 'pay', paymentId]),
    (tx) => tx.from.toLowerCase() === SANDBOX_DEPLOYER.toLowerCase() || paysInToken(tx, escrow),
    what,
  );
}

describe('Hosted checkout page (Chromium)', () => {
  endsWithBooksChecked();
  let m: Merchant;
  let phone: BrowserContext;
  before(async () => {
    m = await newMerchant();
    phone = await newContext('phone', { permissions: ['clipboard-read', 'clipboard-write'] });
  });
  after(async () => {
    await phone?.close();
  });

  test('renders the recipient, amount, network, deposit address and its EIP-681 QR code under a strict CSP, with no violation and no secret', async () => {
    const h = await getHarness();
    const { payment, checkout } = await newPayment(m, { amount: '12.5', description: 'Two coffees <b>& cake</b>' });
    const address = payment.funding.depositAddress.address as string;
    const res = await fetch(checkout.paymentUrl.replace(/^https?:\/\/[^/]+/, h.baseUrl));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-security-policy'), CHECKOUT_CSP);
    assert.match(CHECKOUT_CSP, /default-src 'none'/);
    assert.match(CHECKOUT_CSP, /frame-ancestors 'none'/);
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const html = await res.text();
    assert.ok(!html.includes(checkout.clientSecret), 'no payment secret on the page');
    assert.ok(!html.includes(m.accountId), 'no account id on the page');
    assert.ok(!/<script>|\sstyle=|\son[a-z]+=/i.test(html), 'no inline script, style or handler');
    assert.ok(html.includes('Two coffees &lt;b&gt;&amp; cake&lt;/b&gt;'), 'partner text is escaped');

    const tab = await openCheckout(phone, payment.id);
    const { page } = tab;
    assert.equal(await page.textContent('h1'), 'Corner Shop');
    assert.equal(await page.textContent('[data-field="amount"]'), '12.5');
    assert.match((await page.textContent('.amount'))!, /12\.5\s+USDC/);
    assert.match((await page.textContent('[data-field="network"]'))!, /Anvil sandbox\s+\(chain 31337\)/);
    assert.equal(await page.inputValue('#deposit-address'), address);
    assert.equal(await page.inputValue('#payable-amount'), '12.5');
    assert.equal(await page.textContent('[data-field="title"]'), 'Awaiting payment');
    assert.match((await page.textContent('[data-field="countdown"]'))!, /^\d+:\d\d(:\d\d)?$/);
    assert.equal(await page.getAttribute('.status', 'aria-live'), 'polite');

    // The QR code is an SVG the service drew from the EIP-681 URI of the exact amount and address.
    await page.waitForFunction("document.querySelector('img.qr').naturalWidth > 0");
    const qrSrc = (await page.getAttribute('img.qr', 'src'))!;
    const qr = await fetch(`${h.baseUrl}${qrSrc}`);
    assert.equal(qr.headers.get('content-type'), 'image/svg+xml');
    assert.match(await qr.text(), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*viewBox/);
    const status = (await (await fetch(`${h.baseUrl}/checkout/${payment.id}/status`)).json()) as any;
    assert.equal(status.payable.uri, `ethereum:${payment.paymentAmount.tokenAddress}@31337/transfer?address=${address}&uint256=12500000`);
    assert.deepEqual(tab.cspViolations, []);
    await page.close();
  });

  test('the copy button is reached with Tab, works with Enter, and the clipboard holds the exact address', async () => {
    const { payment } = await newPayment(m);
    const tab = await openCheckout(phone, payment.id);
    const { page } = tab;
    let focused = '';
    for (let i = 0; i < 20 && focused !== 'deposit-address'; i += 1) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate<string>("document.activeElement?.getAttribute('data-copy') ?? ''");
    }
    assert.equal(focused, 'deposit-address', 'Tab reaches the copy button');
    await page.keyboard.press('Enter');
    await page.waitForSelector('button[data-copy="deposit-address"]:text("Copied")');
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), payment.funding.depositAddress.address);
    await page.click('button[data-copy="payable-amount"]');
    await page.waitForSelector('button[data-copy="payable-amount"]:text("Copied")');
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), '10');
    assert.deepEqual(tab.cspViolations, []);
    await page.close();
  });

  test('the status moves live while `sandbox pay` pays (no reload): confirming while the transfer is one block deep, then succeeded, then the page returns to returnUrl', async (t) => {
    const shop = await partnerSite(t);
    const returnUrl = `${shop.url}/orders/42?paid=1`;
    const { payment } = await newPayment(m, { returnUrl });
    const escrow = payment.funding.depositAddress.address as string;
    const tab = await openCheckout(phone, payment.id);
    assert.deepEqual(tab.phases, ['awaiting_payment']);
    // The chain is held after the transfer's block: one confirmation of the two the network needs, and
    // no block comes, so the Payment stays confirming until the page has shown it (it polls every 2 s).
    const held = await sandboxPayOnHeldChain(payment.id, escrow, 'the sandbox payment mined, alone');
    try {
      assert.equal(JSON.parse(held.result.stdout).to, escrow);
      await untilPhase(tab, 'confirming', { mine: false });
      // The bar counts the transfer's blocks as the scanner reads them, one block at a time.
      const required = (await getHarness()).chain.chains.network(payment.funding.depositAddress.chainId).confirmations;
      await untilBar(tab, 1, required);
      await mine(1);
      await untilBar(tab, 2, required);
    } finally {
      await held.release();
    }
    await untilPhase(tab, 'succeeded');
    await tab.page.waitForURL(returnUrl);
    // What the page showed, in order; accepted may pass between two polls, so it is not required.
    const order = ['awaiting_payment', 'seen', 'confirming', 'accepted', 'succeeded'];
    assert.deepEqual(
      tab.phases,
      [...tab.phases].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
      tab.phases.join(' → '),
    );
    assert.ok(
      tab.phases.every((p) => order.includes(p)),
      tab.phases.join(' → '),
    );
    assert.deepEqual([tab.phases[0], tab.phases.at(-1)], ['awaiting_payment', 'succeeded'], tab.phases.join(' → '));
    assert.ok(tab.phases.includes('confirming'), tab.phases.join(' → '));
    // One navigation only: the redirect. Every phase before it came into the same document.
    assert.deepEqual(tab.navigations, [returnUrl]);
    assert.equal(await tab.page.textContent('p'), 'Back at the shop');
    assert.deepEqual(tab.cspViolations, []);
    // Every transition, as the service recorded it (no poll can miss these).
    await waitForPayment(m, payment.id, 'succeeded', (p) => p.status === 'succeeded');
    assert.deepEqual(await eventNames(payment.id), ['payment.created', 'payment.processing', 'payment.accepted', 'payment.succeeded']);
    await tab.page.close();
  });

  test('a reorg that takes the transfer away moves the page back (no bar, the address offered again); paid again, it counts up and succeeds', async () => {
    const h = await getHarness();
    const { payment } = await newPayment(m);
    const escrow = payment.funding.depositAddress.address as string;
    const required = h.chain.chains.network(payment.funding.depositAddress.chainId).confirmations;
    const tab = await openCheckout(phone, payment.id);
    const faults = createChainFaults(h.rpcUrl);
    const first = await sandboxPayOnHeldChain(payment.id, escrow, 'the first payment mined, alone');
    try {
      await untilBar(tab, 1, required);
      // The transfer's block replaced by an empty one, and the transfer nowhere, not even pending.
      const { dropped } = await faults.reorg(1);
      const pending = new Set(await faults.pendingTransactions());
      for (const hash of dropped) if (pending.has(hash)) await faults.dropTransaction(hash);
      await pokeScanner();
      await eventually(
        async (saw) => {
          const shown = {
            bar: !(await tab.page.isHidden('[data-section="confirmations"]')),
            payable: await tab.page.isVisible('[data-section="payable"]'),
          };
          saw(shown);
          return !shown.bar && shown.payable;
        },
        'the bar gone and the address offered again',
        // Blocks without it: the workflow learns it is gone from the chain it reads.
        { mine: true },
      );
    } finally {
      await first.release();
    }
    const second = await sandboxPayOnHeldChain(payment.id, escrow, 'the second payment mined, alone');
    try {
      await untilBar(tab, 1, required);
      await mine(1);
      await untilBar(tab, 2, required);
    } finally {
      await second.release();
    }
    await untilPhase(tab, 'succeeded');
    const paid = await waitForPayment(m, payment.id, 'succeeded', (p) => p.status === 'succeeded');
    assert.equal(paid.finality.transfers.filter((t: { finalized: boolean }) => t.finalized).length, 1, 'one transfer on chain, final');
    assert.deepEqual(tab.cspViolations, []);
    await tab.page.close();
  });

  test('expiry shows: the page turns to Expired and stops offering the address', async () => {
    const h = await getHarness();
    const { payment } = await newPayment(m, { expiresInSeconds: 600 });
    const tab = await openCheckout(phone, payment.id);
    assert.equal(await tab.page.isVisible('[data-section="payable"]'), true);
    assert.deepEqual(await awaitWorkflowResult(h, payment.id), { status: 'expired', statusVersion: 2 });
    await untilPhase(tab, 'expired', { mine: false });
    assert.equal(await tab.page.textContent('[data-field="title"]'), 'Expired');
    assert.match((await tab.page.textContent('[data-field="detail"]'))!, /expired\. Do not send anything/);
    assert.equal(await tab.page.isVisible('[data-section="payable"]'), false);
    assert.deepEqual(tab.navigations, []);
    await tab.page.close();
  });

  test('a cancelled Payment is shown plainly, live, with no address to pay', async () => {
    const { payment } = await newPayment(m);
    const tab = await openCheckout(phone, payment.id);
    const res = await call(`/v2/payments/${payment.id}/cancel`, { credential: m.cred, body: { reasonCode: 'customer_request' } });
    assert.equal(res.status, 200, res.text);
    await untilPhase(tab, 'cancelled', { mine: false });
    assert.equal(await tab.page.textContent('[data-field="title"]'), 'Cancelled');
    assert.match((await tab.page.textContent('[data-field="detail"]'))!, /Corner Shop cancelled this payment request/);
    assert.equal(await tab.page.isVisible('[data-section="payable"]'), false);
    await tab.page.close();
  });

  test('a short payment shows underpaid with the exact rest to send, in the address and the QR code', async () => {
    const { payment } = await newPayment(m);
    const tab = await openCheckout(phone, payment.id);
    await runCli(['sandbox', 'pay', payment.id, '--amount', '4']);
    await untilPhase(tab, 'underpaid');
    const { page } = tab;
    assert.equal(await page.textContent('[data-field="title"]'), 'Underpaid');
    assert.match((await page.textContent('[data-field="detail"]'))!, /Only 4 USDC of 10 USDC arrived\. Send the remaining 6 USDC/);
    assert.equal(await page.inputValue('#payable-amount'), '6');
    assert.equal(await page.inputValue('#deposit-address'), payment.funding.depositAddress.address);
    assert.match((await page.getAttribute('img.qr', 'src'))!, /amountAtomic=6000000$/);
    assert.deepEqual(tab.navigations, []);
    // Pay the rest: the books end balanced and the Payment succeeds.
    await runCli(['sandbox', 'pay', payment.id]);
    await untilPhase(tab, 'succeeded');
    await page.close();
  });
});
