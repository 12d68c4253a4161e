import { EVENT_GROUPS } from '../../domain/event-log/event-catalog';
import type { PartnerActionView } from '../../domain/dashboard/partner-actions';
import type { PartnerRole } from '../../domain/dashboard/partner-users';
import type { RequestLogView } from '../../domain/dashboard/request-log';
import type { TimelineStep } from '../../domain/dashboard/dashboard-reads';
import type { TEvent } from '../../domain/event-log/event-log.schemas';
import type { WebhookAttemptView, WebhookDeliveryView, WebhookEndpointView } from '../../domain/webhooks/endpoint.schemas';
import { WEBHOOK_LIMITS } from '../../domain/webhooks/endpoint.schemas';
import { Html, html, renderHtml } from '../html';
import type { TLiveFinality } from './dashboard.schemas';
import { LIVE_FINALITY_IDLE_STOP_MS, LIVE_FINALITY_POLL_MS } from './live-finality';

/**
 * The partner dashboard's pages: server-rendered HTML and forms, the console's stylesheet, and no
 * script (the CSP allows none) except the live finality bars' on a resource page whose bars can
 * still move (live-finality.ts). Every value is escaped by `html`; secrets appear only on the one page
 * that shows them once.
 */
export interface Viewer {
  email: string;
  role: PartnerRole;
  appId: string;
  environment: string;
  csrf: string;
  /** Other apps this email may switch to. */
  otherApps: string[];
}

export interface Flash {
  notice?: string;
  error?: string;
}

const NAV: Array<[string, string]> = [
  ['/dashboard', 'Overview'],
  ['/dashboard/webhooks', 'Webhooks'],
  ['/dashboard/events', 'Events'],
  ['/dashboard/payments', 'Payments'],
  ['/dashboard/deposits', 'Deposits'],
  ['/dashboard/requests', 'Request log'],
  ['/dashboard/credentials', 'Credentials'],
  ['/dashboard/audit', 'Audit'],
];

/** A script of the page: the one tag the answer's CSP allows, by this nonce (htmlAreaCspWithScript). */
export interface PageScript {
  src: string;
  nonce: string;
}

export function page(title: string, viewer: Viewer | null, body: Html, current = '', script?: PageScript): string {
  return `<!doctype html>${renderHtml(html`<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Partner dashboard</title><link rel="stylesheet" href="/dashboard/assets/dashboard.css"></head>
<body>
<header class="bar"><a class="brand" href="/dashboard">Partner dashboard</a>
${
  viewer
    ? html`<span class="mono">${viewer.appId} (${viewer.environment})</span>
<nav aria-label="Dashboard">${NAV.map(([href, label]) => html`<a href="${href}"${href === current ? new Html(' aria-current="page"') : ''}>${label}</a> `)}</nav>
<form class="logout" method="post" action="/dashboard/logout"><input type="hidden" name="_csrf" value="${viewer.csrf}"><span>${viewer.email} (${viewer.role})</span> <button type="submit">Sign out</button></form>`
    : ''
}
</header>
<main>${body}</main>
${script ? html`<script src="${script.src}" nonce="${script.nonce}"></script>` : ''}
</body></html>`)}`;
}

export function flashOf(flash: Flash): Html {
  return html`${flash.notice ? html`<p class="notice" role="status">${flash.notice}</p>` : ''}${flash.error ? html`<p class="error" role="alert">${flash.error}</p>` : ''}`;
}

const csrfField = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;
const when = (iso: string | null) => (iso ? html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>` : '—');
const empty = (cols: number, text: string) => html`<tr><td colspan="${cols}">${text}</td></tr>`;

export function signInPage(csrf: string, flash: Flash): Html {
  return html`<h1>Sign in</h1>${flashOf(flash)}
<p>Enter the email your team's operator invited. We mail you a 6-digit code.</p>
<form method="post" action="/dashboard/login" class="stack">${csrfField(csrf)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254">
<button type="submit">Email me a code</button>
</form>`;
}

export function codePage(csrf: string, email: string, flash: Flash): Html {
  return html`<h1>Enter your code</h1>${flashOf(flash)}
<p>If <strong>${email}</strong> may use a dashboard, a code is on its way. It works once, for 10 minutes.</p>
<form method="post" action="/dashboard/login/code" class="stack">${csrfField(csrf)}
<input type="hidden" name="email" value="${email}">
<label for="code">Sign-in code</label>
<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required maxlength="6">
<button type="submit">Sign in</button>
</form>
<p><a href="/dashboard/login">Use another email or get a new code</a></p>`;
}

export function overviewPage(
  v: Viewer,
  app: { name: string; revokedAt: string | null },
  counts: { endpoints: number; payments: number; deposits: number },
): Html {
  return html`<h1>${app.name}</h1>
<dl class="facts"><dt>App id</dt><dd class="mono">${v.appId}</dd><dt>Environment</dt><dd>${v.environment}</dd><dt>Your role</dt><dd>${v.role}</dd>
<dt>Credential</dt><dd>${app.revokedAt ? html`revoked at ${when(app.revokedAt)}` : 'active'}</dd>
<dt>Webhook endpoints</dt><dd><a href="/dashboard/webhooks">${counts.endpoints}</a></dd>
<dt>Payments</dt><dd><a href="/dashboard/payments">${counts.payments}</a></dd><dt>Deposits</dt><dd><a href="/dashboard/deposits">${counts.deposits}</a></dd></dl>
${
  v.otherApps.length > 0
    ? html`<h2 id="apps">Your other apps</h2><ul>${v.otherApps.map(
        (appId) =>
          html`<li><form method="post" action="/dashboard/switch">${csrfField(v.csrf)}<input type="hidden" name="appId" value="${appId}"><span class="mono">${appId}</span> <button type="submit">Switch to ${appId}</button></form></li>`,
      )}</ul>`
    : ''
}`;
}

function eventCheckboxes(selected: readonly string[]): Html {
  return html`<fieldset><legend>Events (none ticked: every event; at most ${WEBHOOK_LIMITS.maxEvents})</legend>
${EVENT_GROUPS.map(
  (g) =>
    html`<p class="help"><strong>${g.label}</strong></p>${g.events.map((name) => {
      const id = `ev-${name.replace(/[^a-z0-9]/g, '-')}`;
      return html`<label for="${id}"><input type="checkbox" id="${id}" name="events" value="${name}"${selected.includes(name) ? new Html(' checked') : ''}> ${name}</label> `;
    })}`,
)}
</fieldset>`;
}

export function endpointsPage(v: Viewer, endpoints: WebhookEndpointView[], canManage: boolean, flash: Flash): Html {
  return html`<h1>Webhook endpoints</h1>${flashOf(flash)}
<table><thead><tr><th scope="col">URL</th><th scope="col">Status</th><th scope="col">Events</th><th scope="col">Created</th></tr></thead><tbody>
${endpoints.length === 0 ? empty(4, 'No endpoints yet.') : endpoints.map((e) => html`<tr data-id="${e.id}"><td><a href="/dashboard/webhooks/${e.id}">${e.url}</a></td><td><span class="state">${e.status}</span></td><td>${e.allEvents ? 'every event' : e.events.length}</td><td>${when(e.createdAt)}</td></tr>`)}
</tbody></table>
${
  canManage
    ? html`<h2 id="add">Add an endpoint</h2>
<form method="post" action="/dashboard/webhooks" class="stack action-form">${csrfField(v.csrf)}
<label for="url">URL (public HTTPS, at most ${WEBHOOK_LIMITS.urlMaxChars} characters, no credentials; it can't be changed later)</label>
<input id="url" name="url" type="url" required maxlength="${WEBHOOK_LIMITS.urlMaxChars}">
<label for="description">Description (optional, at most ${WEBHOOK_LIMITS.descriptionMaxChars} characters)</label>
<input id="description" name="description" type="text" maxlength="${WEBHOOK_LIMITS.descriptionMaxChars}">
${eventCheckboxes([])}
<button type="submit">Add endpoint</button>
</form>`
    : html`<p class="help">Your role can read endpoints only.</p>`
}`;
}

export function secretPage(title: string, what: string, secret: string, back: string): Html {
  return html`<h1>${title}</h1>
<p class="notice" role="status">${what} Copy it now: it is shown only this once.</p>
<label for="secret">Secret</label>
<input id="secret" class="mono" type="text" readonly value="${secret}" size="70">
<p><a href="${back}">Done</a></p>`;
}

function deliveryRows(deliveries: WebhookDeliveryView[]): Html {
  return html`<table><thead><tr><th scope="col">Delivery</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last status</th><th scope="col">Created</th></tr></thead><tbody>
${
  deliveries.length === 0
    ? empty(6, 'No deliveries yet.')
    : deliveries.map(
        (d) =>
          html`<tr data-id="${d.id}"><td><a class="mono" href="/dashboard/deliveries/${d.id}">${d.id}</a></td><td>${d.eventName}</td><td><span class="state ${d.status}">${d.status}</span></td><td>${d.attemptCount}</td><td>${d.lastStatusCode ?? d.lastError ?? '—'}</td><td>${when(d.createdAt)}</td></tr>`,
      )
}
</tbody></table>`;
}

function endpointActions(v: Viewer, e: WebhookEndpointView): Html {
  const base = `/dashboard/webhooks/${e.id}`;
  const button = (action: string, label: string, help: string) =>
    html`<form method="post" action="${base}/${action}" class="stack action-form">${csrfField(v.csrf)}<p class="help">${help}</p><button type="submit">${label}</button></form>`;
  if (e.status === 'archived') return html`<p>This endpoint is archived: it receives nothing and can't be changed.</p>`;
  return html`<h2 id="actions">Actions</h2><div class="actions">
${e.status === 'enabled' ? button('test', 'Send a test event', `A signed ${'webhook_endpoint.test'} event to this endpoint only.`) : ''}
${e.status === 'enabled' ? button('disable', 'Disable', 'Stops deliveries until enabled again.') : button('enable', 'Enable', 'Deliveries resume for new events.')}
${button('rotate-secret', 'Rotate signing secret', 'A new secret signs every delivery from now on.')}
${button('archive', 'Archive', 'Permanent: the endpoint stops for good.')}
${
  e.status === 'enabled'
    ? html`<form method="post" action="${base}/recover" class="stack action-form">${csrfField(v.csrf)}
<p class="help">Deliver again every subscribed event since a time (UTC, at most 90 days back) that this endpoint did not receive.</p>
<label for="since">Since (UTC)</label><input id="since" name="since" type="datetime-local" step="1" required>
<button type="submit">Recover missed events</button></form>`
    : ''
}
</div>
<h2 id="edit">Edit</h2>
<form method="post" action="${base}" class="stack action-form">${csrfField(v.csrf)}
<label for="description">Description</label>
<input id="description" name="description" type="text" maxlength="${WEBHOOK_LIMITS.descriptionMaxChars}" value="${e.description ?? ''}">
${eventCheckboxes(e.events)}
<button type="submit">Save</button>
</form>`;
}

export function endpointPage(v: Viewer, e: WebhookEndpointView, deliveries: WebhookDeliveryView[], canManage: boolean, flash: Flash): Html {
  return html`<h1>Endpoint</h1>${flashOf(flash)}
<dl class="facts"><dt>Id</dt><dd class="mono">${e.id}</dd><dt>URL</dt><dd class="mono">${e.url}</dd><dt>Description</dt><dd>${e.description ?? '—'}</dd>
<dt>Status</dt><dd><span class="state">${e.status}</span></dd><dt>Events</dt><dd>${e.allEvents ? 'every event' : e.events.join(', ')}</dd>
<dt>Secret version</dt><dd>${e.secretVersion}${e.secretRotatedAt ? html`, rotated ${when(e.secretRotatedAt)}` : ''}</dd><dt>Created</dt><dd>${when(e.createdAt)}</dd></dl>
${canManage ? endpointActions(v, e) : ''}
<h2 id="deliveries">Deliveries (latest 50)</h2>
${deliveryRows(deliveries)}`;
}

export function deliveryPage(v: Viewer, d: WebhookDeliveryView, attempts: WebhookAttemptView[], canManage: boolean, flash: Flash): Html {
  return html`<h1>Delivery</h1>${flashOf(flash)}
<dl class="facts"><dt>Id</dt><dd class="mono">${d.id}</dd><dt>Event</dt><dd>${d.eventName} <span class="mono">${d.eventId}</span></dd>
<dt>Endpoint</dt><dd><a class="mono" href="/dashboard/webhooks/${d.endpointId}">${d.endpointId}</a></dd><dt>Status</dt><dd><span class="state ${d.status}">${d.status}</span></dd>
<dt>Round</dt><dd>${d.round}</dd><dt>Next attempt</dt><dd>${when(d.nextAttemptAt)}</dd></dl>
${
  canManage && (d.status === 'succeeded' || d.status === 'abandoned')
    ? html`<form method="post" action="/dashboard/deliveries/${d.id}/resend" class="stack">${csrfField(v.csrf)}<button type="submit">Resend</button></form>`
    : ''
}
<h2 id="attempts">Attempts</h2>
<table><thead><tr><th scope="col">Round</th><th scope="col">Attempt</th><th scope="col">Sent</th><th scope="col">Status</th><th scope="col">Latency</th><th scope="col">Outcome</th><th scope="col">Response (truncated)</th></tr></thead><tbody>
${
  attempts.length === 0
    ? empty(7, 'No attempt yet.')
    : attempts.map(
        (a) =>
          html`<tr><td>${a.round}</td><td>${a.attempt}</td><td>${when(a.startedAt)}</td><td>${a.responseStatus ?? '—'}</td><td>${a.latencyMs === null ? '—' : `${a.latencyMs} ms`}</td><td>${a.outcome ?? a.state}</td><td class="mono">${(a.responseBody ?? a.error ?? '').slice(0, 300)}</td></tr>`,
      )
}
</tbody></table>`;
}

export function eventsPage(events: TEvent[], filters: { name?: string; resourceId?: string }, next: string | null): Html {
  return html`<h1>Events</h1>
<form method="get" action="/dashboard/events" class="stack">
<label for="name">Name</label><select id="name" name="name"><option value="">Any</option>${EVENT_GROUPS.flatMap((g) => g.events).map((n) => html`<option${n === filters.name ? new Html(' selected') : ''}>${n}</option>`)}</select>
<label for="resourceId">Resource id</label><input id="resourceId" name="resourceId" type="text" maxlength="64" value="${filters.resourceId ?? ''}">
<button type="submit">Filter</button></form>
<table><thead><tr><th scope="col">Event</th><th scope="col">Name</th><th scope="col">Resource</th><th scope="col">Sequence</th><th scope="col">Created</th></tr></thead><tbody>
${
  events.length === 0
    ? empty(5, 'No events match.')
    : events.map(
        (e) =>
          html`<tr data-id="${e.id}"><td><a class="mono" href="/dashboard/events/${e.id}">${e.id}</a></td><td>${e.name}</td><td class="mono">${e.resourceId}</td><td>${e.resourceSequence}</td><td>${when(e.createdAt)}</td></tr>`,
      )
}
</tbody></table>
${next ? html`<p><a href="${next}">Older events</a></p>` : ''}`;
}

export function eventPage(e: TEvent): Html {
  return html`<h1>Event</h1>
<dl class="facts"><dt>Id</dt><dd class="mono">${e.id}</dd><dt>Name</dt><dd>${e.name}</dd><dt>Resource</dt><dd class="mono">${e.resourceType} ${e.resourceId}</dd>
<dt>Sequence</dt><dd>${e.resourceSequence}</dd><dt>Created</dt><dd>${when(e.createdAt)}</dd></dl>
<h2 id="payload">Payload</h2><pre class="mono" tabindex="0">${JSON.stringify(e.payload, null, 2)}</pre>`;
}

export function resourceListPage(
  title: string,
  base: string,
  rows: Array<{ id: string; status: string; amount: string; createdAt: string }>,
): Html {
  return html`<h1>${title}</h1><p>The latest 50, newest first. Read-only.</p>
<table><thead><tr><th scope="col">Id</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">Created</th></tr></thead><tbody>
${rows.length === 0 ? empty(4, 'None yet.') : rows.map((r) => html`<tr data-id="${r.id}"><td><a class="mono" href="${base}/${r.id}">${r.id}</a></td><td><span class="state">${r.status}</span></td><td>${r.amount}</td><td>${when(r.createdAt)}</td></tr>`)}
</tbody></table>`;
}

/** Where a resource page's bars are read again while live (GET, JSON: ZLiveFinality). */
export interface FinalityOnPage {
  state: TLiveFinality;
  url: string;
}

/**
 * One bar per transaction: "n of m confirmations", as the hosted checkout shows the payer's. While
 * live, the page's script (public/dashboard/finality.js) asks `url` again every pollMs and moves the
 * bars, stops once nothing can move, and offers a button to pause (WCAG 2.2.2); the status line
 * tells a screen reader when a transaction becomes final and when the updates stop.
 */
function finalitySection(finality: FinalityOnPage | undefined): Html | string {
  if (!finality) return '';
  const { state, url } = finality;
  if (state.bars.length === 0) return html`<h2 id="finality">On chain</h2><p>Nothing on chain yet.</p>`;
  const list = html`<ul class="finality">${state.bars.map(
    (b) =>
      html`<li data-tx="${b.transactionHash}" data-finalized="${String(b.finalized)}">${b.label} <span class="mono">${b.transactionHash}</span><br><progress max="${String(b.confirmationsRequired)}" value="${String(Math.min(b.confirmations, b.confirmationsRequired))}" aria-label="${b.label} confirmations">${String(b.confirmations)} of ${String(b.confirmationsRequired)}</progress> <span data-field="confirmations">${b.text}</span></li>`,
  )}</ul>`;
  if (!state.live) return html`<h2 id="finality">On chain</h2>${list}`;
  return html`<h2 id="finality">On chain</h2>
<div data-live-finality="${url}" data-poll-ms="${String(LIVE_FINALITY_POLL_MS)}" data-idle-stop-ms="${String(LIVE_FINALITY_IDLE_STOP_MS)}">${list}
<p class="live-controls" hidden><button type="button" data-action="pause">Pause live updates</button></p>
<p class="help" role="status" data-field="finality-status"></p></div>`;
}

export function resourcePage(title: string, view: unknown, timeline: TimelineStep[], finality?: FinalityOnPage): Html {
  return html`<h1>${title}</h1>${finalitySection(finality)}
<h2 id="timeline">Timeline</h2>
<ol class="timeline">${timeline.length === 0 ? html`<li>No events yet.</li>` : timeline.map((t) => html`<li>${when(t.createdAt)} <a href="/dashboard/events/${t.eventId}">${t.name}</a> (#${t.resourceSequence})</li>`)}</ol>
<h2 id="api">As the API answers it</h2><pre class="mono" tabindex="0">${JSON.stringify(view, null, 2)}</pre>`;
}

export function requestsPage(rows: RequestLogView[]): Html {
  return html`<h1>Request log</h1><p>The app's latest 100 API requests, kept 30 days. No body, secret or token is ever recorded.</p>
<table><thead><tr><th scope="col">Time</th><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Status</th><th scope="col">Latency</th><th scope="col">Idempotency-Key</th><th scope="col">Request id</th></tr></thead><tbody>
${
  rows.length === 0
    ? empty(7, 'No requests yet.')
    : rows.map(
        (r) =>
          html`<tr><td>${when(r.createdAt)}</td><td>${r.method}</td><td class="mono">${r.path}</td><td>${r.status}</td><td>${r.latencyMs} ms</td><td class="mono">${r.idempotencyKey ?? '—'}</td><td class="mono">${r.requestId}</td></tr>`,
      )
}
</tbody></table>`;
}

export function credentialsPage(v: Viewer, app: { revokedAt: string | null }, canManage: boolean, flash: Flash): Html {
  return html`<h1>Credentials</h1>${flashOf(flash)}
<dl class="facts"><dt>App id</dt><dd class="mono">${v.appId}</dd><dt>Secret</dt><dd>${app.revokedAt ? html`revoked at ${when(app.revokedAt)}` : 'active (never shown again after it is issued)'}</dd></dl>
${
  canManage && !app.revokedAt
    ? html`<form method="post" action="/dashboard/credentials/code" class="stack">${csrfField(v.csrf)}
<p class="help">Rotating or revoking the secret asks for a fresh code: we email one to ${v.email}.</p>
<button type="submit">Email me a code</button></form>
<div class="actions">
<form method="post" action="/dashboard/credentials/rotate" class="stack action-form">${csrfField(v.csrf)}
<p class="help">Issues a new secret. The current one keeps working for the overlap, then stops.</p>
<label for="overlapHours">Overlap (hours, 0 to 168)</label><input id="overlapHours" name="overlapHours" type="number" min="0" max="168" value="24" required>
<label for="rotateCode">Emailed code to rotate</label><input id="rotateCode" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="16">
<button type="submit">Rotate secret</button></form>
<form method="post" action="/dashboard/credentials/revoke" class="stack action-form">${csrfField(v.csrf)}
<p class="help">Refuses every secret and client token of this app at once. It can't be undone here.</p>
<label for="confirm">Type the app id to confirm</label><input id="confirm" name="confirm" type="text" required maxlength="64">
<label for="revokeCode">Emailed code to revoke</label><input id="revokeCode" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="16">
<button type="submit">Revoke</button></form></div>`
    : canManage
      ? ''
      : html`<p class="help">Only an admin of your team can rotate or revoke the secret.</p>`
}`;
}

export function auditPage(actions: PartnerActionView[]): Html {
  return html`<h1>Audit</h1><p>Every change made to this app from the dashboard, and the operators' invitations; the latest 200.</p>
<table><thead><tr><th scope="col">Time</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th></tr></thead><tbody>
${actions.length === 0 ? empty(4, 'Nothing yet.') : actions.map((a) => html`<tr><td>${when(a.createdAt)}</td><td>${a.actor}</td><td>${a.action}</td><td class="mono">${a.target ?? '—'}</td></tr>`)}
</tbody></table>`;
}

export function messagePage(title: string, message: string): Html {
  return html`<h1>${title}</h1><p class="error" role="alert">${message}</p><p><a href="/dashboard">Back to the dashboard</a></p>`;
}
