import type { TCheckoutPage, TCheckoutStatus } from '../../domain/checkout/checkout-view.schemas';
import { phaseText } from './phase-text';
import { escapeHtml } from '../html';

// Every text and attribute value goes through this: the page holds partner- and payer-supplied text.
const e = escapeHtml;

/** The page's own script and stylesheet, with a content hash so a deploy never serves a stale one. */
export interface CheckoutAssetUrls {
  script: string;
  style: string;
}

export function qrUrl(paymentId: string, amountAtomic: string): string {
  return `/checkout/${encodeURIComponent(paymentId)}/qr.svg?amountAtomic=${encodeURIComponent(amountAtomic)}`;
}

function countdownText(expiresAt: string, now: Date): string {
  const left = Math.max(0, Math.floor((Date.parse(expiresAt) - now.getTime()) / 1000));
  const h = Math.floor(left / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = String(left % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** "n of m confirmations": the bar's text, here and in the script (public/checkout/checkout.js). */
export function confirmationsText(c: { confirmations: number; confirmationsRequired: number }): string {
  return `${c.confirmations} of ${c.confirmationsRequired} confirmations`;
}

/** The payer's transfers' depth as a progress bar, counted up by the status poll; hidden before any transfer is seen. */
function confirmationsSection(c: TCheckoutStatus['confirmations']): string {
  const max = c?.confirmationsRequired ?? 1;
  const value = Math.min(c?.confirmations ?? 0, max);
  const text = c ? confirmationsText(c) : '';
  return `<section class="confirmations" data-section="confirmations" aria-label="Confirmations on chain"${c ? '' : ' hidden'}>
    <progress data-field="confirmations-bar" max="${max}" value="${value}" aria-labelledby="confirmations-text">${e(text)}</progress>
    <p id="confirmations-text" data-field="confirmations-text">${e(text)}</p>
  </section>`;
}

/**
 * The hosted checkout page. Mobile-first and usable without its script (the status is rendered on the
 * server); the script (assets/checkout.js) polls the status, runs the countdown, copies, redirects on
 * success and drives the Vault option. No inline script or style: the CSP allows neither.
 */
export function renderCheckoutPage(page: TCheckoutPage, assets: CheckoutAssetUrls, now: Date): string {
  const s = page.status;
  const text = phaseText(page);
  const recipient = page.recipient.displayName;
  const asset = s.assetCode;
  const payable = s.payable;
  const logo = page.recipient.logoUrl
    ? `<img class="logo" src="${e(page.recipient.logoUrl)}" alt="" width="56" height="56" referrerpolicy="no-referrer">`
    : `<span class="logo logo-initial" aria-hidden="true">${e(recipient.slice(0, 1).toUpperCase())}</span>`;
  const returnHost = s.returnUrl ? new URL(s.returnUrl).host : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Pay ${e(s.amount)} ${e(asset)} to ${e(recipient)}</title>
<link rel="stylesheet" href="${e(assets.style)}">
<script src="${e(assets.script)}" defer></script>
</head>
<body>
<main class="checkout" data-payment-id="${e(s.paymentId)}" data-phase="${e(s.phase)}" data-expires-at="${e(s.expiresAt)}">
  <header class="recipient">
    ${logo}
    <div>
      <p class="eyebrow">Payment to</p>
      <h1 data-field="recipient">${e(recipient)}</h1>
    </div>
  </header>

  <section class="summary" aria-label="Payment details">
    <p class="amount"><span data-field="amount">${e(s.amount)}</span> <span class="asset">${e(asset)}</span></p>
    ${page.description ? `<p class="description">${e(page.description)}</p>` : ''}
    <dl class="facts">
      <div><dt>Network</dt><dd data-field="network">${e(page.network.name)} <span class="muted">(chain ${page.network.chainId})</span></dd></div>
      <div><dt>Token contract</dt><dd><code class="break">${e(page.tokenAddress)}</code></dd></div>
      <div><dt>Time left</dt><dd><time data-field="countdown" datetime="${e(s.expiresAt)}">${e(countdownText(s.expiresAt, now))}</time></dd></div>
    </dl>
  </section>

  <section class="status" data-phase="${e(s.phase)}" role="status" aria-live="polite" aria-atomic="true">
    <h2 class="phase-title" data-field="title">${e(text.title)}</h2>
    <p data-field="detail">${e(text.detail)}</p>
    <p class="redirect" data-field="redirect" hidden></p>
  </section>

  ${confirmationsSection(s.confirmations)}

  <section class="pay" data-section="payable" aria-label="Pay by wallet transfer"${payable ? '' : ' hidden'}>
    <img class="qr" data-field="qr" width="240" height="240"${payable ? ` src="${e(qrUrl(s.paymentId, payable.amountAtomic))}"` : ''} alt="QR code of this payment request for a wallet app: the amount to send, to the deposit address below">
    <div class="field">
      <label for="deposit-address">Deposit address</label>
      <div class="copy-row">
        <textarea id="deposit-address" class="value address" data-field="address" rows="2" readonly spellcheck="false" autocomplete="off">${payable ? e(payable.address) : ''}</textarea>
        <button type="button" class="copy" data-copy="deposit-address" aria-label="Copy deposit address">Copy</button>
      </div>
    </div>
    <div class="field">
      <label for="payable-amount">Amount to send (${e(asset)})</label>
      <div class="copy-row">
        <input id="payable-amount" class="value" data-field="payable-amount" readonly spellcheck="false" autocomplete="off" value="${payable ? e(payable.amount) : ''}">
        <button type="button" class="copy" data-copy="payable-amount" aria-label="Copy amount">Copy</button>
      </div>
    </div>
    <p class="note">Send only ${e(asset)} on ${e(page.network.name)}. Another token or network can't be credited.</p>
  </section>

  <section class="vault" data-section="vault" aria-label="Pay from your vault" hidden>
    <p data-field="vault-text">You can pay this from your vault.</p>
    <button type="button" class="primary" data-action="vault-pay">Pay from Vault</button>
  </section>

  ${s.returnUrl ? `<p class="back"><a data-field="return-link" href="${e(s.returnUrl)}" rel="noreferrer">Back to ${e(returnHost)}</a></p>` : ''}
  <p class="visually-hidden" aria-live="polite" data-field="announce"></p>
</main>
</body>
</html>
`;
}
