import type { HeldItem, HeldKind, HoldDetail, IncidentItem, TimelineEntry } from '../../domain/operators/operator-holds';
import type { OperatorActionView } from '../../domain/operators/operator-actions';
import type { SearchHit } from '../../domain/operators/operator-search';
import { alertItem } from '../../domain/monitoring/alerts';
import type { OperatorAlertView } from '../../domain/monitoring/alerts.schemas';
import type { ReconciliationRunView } from '../../domain/monitoring/reconciliation-runs';
import type { PartnerUserView } from '../../domain/dashboard/partner-users';
import { Html, html, renderHtml } from '../html';

export { Html, html };

/**
 * The operator console's pages: plain server-rendered HTML with forms, no script at all (the CSP
 * allows none), one stylesheet from /console/assets. Every value is escaped by `html`.
 */
/** How the pages link out: a transaction (explorer or the console's receipt page) and a workflow (Temporal Web UI). */
export interface Links {
  tx(chainId: number, txHash: string): string;
  workflow(workflowId: string): string | null;
}

export interface PageContext {
  who: string | null;
  csrf: string | null;
}

export function page(title: string, ctx: PageContext, body: Html): string {
  return `<!doctype html>${renderHtml(html`<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Operator console</title><link rel="stylesheet" href="/console/assets/console.css"></head>
<body>
<header class="bar"><a class="brand" href="/console">Operator console</a>
${
  ctx.who
    ? html`<nav aria-label="Console"><a href="/console">Holds</a> <a href="/console/alerts">Alerts</a> <a href="/console/approvals">Approvals</a> <a href="/console/dashboard-users">Dashboard users</a> <a href="/console/actions">Audit</a></nav>
<form class="search" role="search" method="get" action="/console/search"><label for="console-search">Find</label> <input id="console-search" name="q" type="search" maxlength="255" placeholder="id, externalReference or transaction hash"> <button type="submit">Find</button></form>
<form class="logout" method="post" action="/console/logout"><input type="hidden" name="_csrf" value="${ctx.csrf}"><span>Signed in as <strong>${ctx.who}</strong></span> <button type="submit">Log out</button></form>`
    : ''
}
</header>
<main>${body}</main>
</body></html>`)}`;
}

export function loginPage(csrf: string, error: string | null): Html {
  return html`<h1>Sign in</h1>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/console/login" class="stack">
<input type="hidden" name="_csrf" value="${csrf}">
<label for="email">Your operator email</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254">
<button type="submit">Email me a sign-in code</button>
</form>`;
}

/** Sign-in where the company's OpenID Connect provider is configured: one link to it. */
export function oidcLoginPage(): Html {
  return html`<h1>Sign in</h1>
<p>Operators sign in with their company account.</p>
<p><a class="button" href="/console/login/oidc">Sign in with your company account</a></p>`;
}

/** The second step: the emailed code and the authenticator's code, for the email given. */
export function codePage(csrf: string, email: string, error: string | null): Html {
  return html`<h1>Sign in</h1>
${error ? html`<p class="error" role="alert">${error}</p>` : html`<p role="status">If ${email} belongs to an operator, a sign-in code is on its way there.</p>`}
<form method="post" action="/console/login/code" class="stack">
<input type="hidden" name="_csrf" value="${csrf}">
<input type="hidden" name="email" value="${email}">
<label for="code">Emailed code</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required maxlength="6">
<label for="totp">Authenticator code</label>
<input id="totp" name="totp" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required maxlength="6">
<button type="submit">Sign in</button>
</form>
<p><a href="/console/login">Start again</a></p>`;
}

const PATHS: Record<HeldKind, string> = { payment: 'payments', deposit: 'deposits', fund_return: 'fund-returns' };
const TITLES: Record<HeldKind, string> = { payment: 'Payment', deposit: 'Deposit', fund_return: 'Fund return' };
export const itemHref = (i: { kind: HeldKind; id: string }) => `/console/${PATHS[i.kind]}/${encodeURIComponent(i.id)}`;

function txCell(links: Links, chainId: number, txHash: string | null): Html | string {
  return txHash ? html`<a class="mono" href="${links.tx(chainId, txHash)}">${txHash.slice(0, 10)}…${txHash.slice(-6)}</a>` : '—';
}

function workflowCell(links: Links, workflowId: string | null): Html | string {
  if (!workflowId) return '—';
  const href = links.workflow(workflowId);
  return href ? html`<a href="${href}" title="workflow ${workflowId}">Temporal UI</a>` : html`<span class="mono">${workflowId}</span>`;
}

export function listPage(data: { items: HeldItem[]; incidents: IncidentItem[]; workflowIds: Map<string, string> }, links: Links): Html {
  return html`<h1>Holds</h1>
<section aria-labelledby="held"><h2 id="held">Payments, deposits and fund returns needing attention (${data.items.length})</h2>
${
  data.items.length === 0
    ? html`<p>Nothing is retrying or waiting for an operator.</p>`
    : html`<table><thead><tr><th scope="col">Item</th><th scope="col">State</th><th scope="col">Reason</th><th scope="col">Amount</th><th scope="col">Status</th><th scope="col">Since</th><th scope="col">Workflow</th></tr></thead><tbody>
${data.items.map((i) => html`<tr data-id="${i.id}"><td><a href="${itemHref(i)}">${i.kind} ${i.id}</a></td><td><span class="state ${i.state}">${i.state}</span></td><td>${i.reasonCode ?? '—'}</td><td>${i.amount}</td><td>${i.status}</td><td><time>${i.since}</time></td><td>${workflowCell(links, data.workflowIds.get(i.id) ?? null)}</td></tr>`)}
</tbody></table>`
}
</section>
<section aria-labelledby="incidents"><h2 id="incidents">Incidents awaiting recovery (${data.incidents.length})</h2>
${data.incidents.length === 0 ? html`<p>No funds are held in incidents.</p>` : incidentTable(data.incidents, links, true)}
</section>`;
}

function incidentTable(incidents: IncidentItem[], links: Links, withPayment: boolean, chainId?: number): Html {
  return html`<table><thead><tr><th scope="col">Incident</th>${withPayment ? html`<th scope="col">Payment</th>` : ''}<th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">From</th><th scope="col">Transaction</th></tr></thead><tbody>
${incidents.map((i) => html`<tr><td class="mono">${i.id}</td>${withPayment ? html`<td><a href="${itemHref({ kind: 'payment', id: i.paymentId })}">${i.paymentId}</a></td>` : ''}<td>${i.kind}</td><td>${i.status}</td><td>${i.amount}</td><td class="mono">${i.fromAddress ?? '—'}</td><td>${chainId === undefined ? (i.transactionHash ?? '—') : txCell(links, chainId, i.transactionHash)}</td></tr>`)}
</tbody></table>`;
}

function timelineList(entries: TimelineEntry[], links: Links, chainId: number): Html {
  return html`<ol class="timeline">${entries.map((e) => html`<li><time>${e.at}</time> <strong>${e.what}</strong> ${e.detail} ${e.txHash ? txCell(links, chainId, e.txHash) : ''}</li>`)}</ol>`;
}

/** A held item links to its page; an app (a credential action) has no console page. */
function targetCell(t: OperatorActionView['target']): Html {
  const label = html`${t.type} ${t.id}`;
  return t.type === 'app' || t.type === 'approval' ? label : html`<a href="${itemHref({ kind: t.type, id: t.id })}">${label}</a>`;
}

export function auditTable(actions: OperatorActionView[], withTarget: boolean): Html {
  if (actions.length === 0) return html`<p>No operator actions yet.</p>`;
  return html`<table class="audit"><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Via</th><th scope="col">What</th>${withTarget ? html`<th scope="col">Target</th>` : ''}<th scope="col">Why</th><th scope="col">Outcome</th></tr></thead><tbody>
${actions.map((a) => html`<tr><td><time>${a.createdAt}</time></td><td>${a.actor}</td><td>${a.channel}</td><td>${a.action}${Object.entries(a.details).map(([k, v]) => html` <span class="mono">${k}=${v}</span>`)}</td>${withTarget ? html`<td>${targetCell(a.target)}</td>` : ''}<td>${a.reason ?? '—'}</td><td><span class="outcome ${a.outcome}">${a.outcome}</span>${a.outcomeDetail ? html` ${a.outcomeDetail}` : ''}</td></tr>`)}
</tbody></table>`;
}

/** What a retry does, in the held item's terms. */
function retryWording(item: HoldDetail['item']): [title: string, help: string] {
  if (item.kind === 'fund_return')
    return ['Retry the return', 'Send it again: a leg that may still be mined is re-sent as it was, a reverted one is signed anew.'];
  if (item.status === 'unrecorded')
    return ['Retry the write', "Write the deposit's row again: once recorded, it carries on as any deposit."];
  return ['Retry settlement', 'Settle again with a fresh retry budget.'];
}

function resolveForms(d: HoldDetail, csrf: string): Html {
  const action = `${itemHref(d.item)}/resolve`;
  const form = (
    value: string,
    title: string,
    help: string,
    extra: Html | string,
  ) => html`<form method="post" action="${action}" class="stack action-form" aria-labelledby="h-${value}">
<h3 id="h-${value}">${title}</h3><p class="help">${help}</p>
<input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="action" value="${value}">
${extra}
<label for="reason-${value}">Why (recorded in the audit)</label>
<input id="reason-${value}" name="reason" type="text" required maxlength="500">
<button type="submit">${title}</button>
</form>`;
  const [retryTitle, retryHelp] = retryWording(d.item);
  // A deposit with no row has nothing to mark settled (the action is refused): no form for it.
  const unrecorded = d.item.status === 'unrecorded';
  return html`<div class="actions">
${form('retry', retryTitle, retryHelp, '')}
${
  unrecorded
    ? ''
    : form(
        'mark-settled',
        'Mark settled',
        'Record a payout made by hand: the transaction is checked on the chain first.',
        html`<label for="tx-mark-settled">Payout transaction hash</label>
<input id="tx-mark-settled" name="txHash" type="text" required pattern="0x[0-9a-fA-F]{64}" class="mono" autocomplete="off">`,
      )
}
${form('fail', 'Fail', 'Give up: the item fails with this reason (shown to the partner).', '')}
</div>`;
}

function recoverForm(d: HoldDetail, csrf: string): Html {
  return html`<form method="post" action="${itemHref(d.item)}/incident-recoveries" class="stack action-form" aria-labelledby="h-recover">
<h3 id="h-recover">Recover an incident</h3><p class="help">Return an incident's funds from the escrow, to the sender of its transfer unless an address is given.</p>
<input type="hidden" name="_csrf" value="${csrf}">
<label for="incidentId">Incident</label>
<select id="incidentId" name="incidentId" required>${d.incidents.filter((i) => i.status !== 'confirmed').map((i) => html`<option value="${i.id}">${i.id} (${i.kind}, ${i.amount}, ${i.status})</option>`)}</select>
<label for="destinationAddress">Destination address (optional)</label>
<input id="destinationAddress" name="destinationAddress" type="text" pattern="0x[0-9a-fA-F]{40}" class="mono" autocomplete="off">
<label for="reason-recover">Why (recorded in the audit)</label>
<input id="reason-recover" name="reason" type="text" required maxlength="500">
<button type="submit">Recover incident</button>
</form>`;
}

export function detailPage(d: HoldDetail, links: Links, csrf: string, flash: { notice?: string; error?: string }): Html {
  const held = d.item.state === 'requires_intervention';
  const open = d.incidents.some((i) => i.status !== 'confirmed');
  return html`<p><a href="/console">← Holds</a></p>
<h1>${TITLES[d.item.kind]} <span class="mono">${d.item.id}</span></h1>
${flash.notice ? html`<p class="notice" role="status">${flash.notice}</p>` : ''}
${flash.error ? html`<p class="error" role="alert">${flash.error}</p>` : ''}
<dl class="facts">${d.facts.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}<dt>Workflow</dt><dd>${workflowCell(links, d.workflowId)}</dd></dl>
<section aria-labelledby="h-actions"><h2 id="h-actions">Actions</h2>
${held ? resolveForms(d, csrf) : html`<p>${d.item.kind === 'payment' ? 'The Payment' : `The ${TITLES[d.item.kind].toLowerCase()}`} is not held (${d.item.state}): retry, mark settled and fail need requires_intervention.</p>`}
${open ? recoverForm(d, csrf) : ''}
</section>
${d.incidents.length ? html`<section aria-labelledby="h-incidents"><h2 id="h-incidents">Incidents</h2>${incidentTable(d.incidents, links, false, d.item.chainId)}</section>` : ''}
<section aria-labelledby="h-timeline"><h2 id="h-timeline">Timeline</h2>${timelineList(d.timeline, links, d.item.chainId)}</section>
<section aria-labelledby="h-audit"><h2 id="h-audit">Operator actions</h2>${auditTable(d.audit, false)}</section>`;
}

export function receiptPage(
  chainId: number,
  txHash: string,
  facts: Array<[string, string]>,
  transfers: Array<{ from: string; to: string; amount: string; token: string }>,
): Html {
  return html`<p><a href="/console">← Holds</a></p>
<h1>Transaction <span class="mono">${txHash}</span></h1>
<p>Read from chain ${chainId}'s RPC node (the network has no block explorer configured).</p>
<dl class="facts">${facts.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
<h2>Token transfers</h2>
${
  transfers.length === 0
    ? html`<p>None.</p>`
    : html`<table><thead><tr><th scope="col">From</th><th scope="col">To</th><th scope="col">Amount (atomic)</th><th scope="col">Token</th></tr></thead><tbody>
${transfers.map((t) => html`<tr><td class="mono">${t.from}</td><td class="mono">${t.to}</td><td>${t.amount}</td><td class="mono">${t.token}</td></tr>`)}</tbody></table>`
}`;
}

const DETAIL_CHARS = 160;

/** An alert's details as `key=value` pairs, each value cut short (the admin API has them whole). */
function alertDetails(details: unknown): Html | string {
  if (!details || typeof details !== 'object') return '—';
  return html`${Object.entries(details as Record<string, unknown>).map(([k, v]) => {
    const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
    return html`<span class="mono">${k}=${text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS)}…` : text}</span> `;
  })}`;
}

function alertSubject(a: OperatorAlertView): Html {
  const item = alertItem(a);
  return item ? html`<a href="${itemHref(item)}">${item.kind} ${item.id}</a>` : html`<span class="mono">${a.subject}</span>`;
}

const alertsHref = (kind: string) => `/console/alerts?kind=${encodeURIComponent(kind)}#open-alerts`;

function runRow(r: ReconciliationRunView, links: Links): Html {
  const last = r.lastRun;
  const alerts = Object.entries(r.openAlerts);
  return html`<tr data-reconciliation="${r.name}"><th scope="row">${r.name}</th>
<td>${last ? html`<time>${last.finishedAt}</time>` : 'never'}</td>
<td>${last?.startedAt ? html`<time>${last.startedAt}</time>` : '—'}</td>
<td>${last ? html`<span class="outcome ${last.outcome}">${last.outcome === 'clean' ? 'clean' : `${last.discrepancies} ${last.discrepancies === 1 ? 'discrepancy' : 'discrepancies'}`}</span>` : '—'}</td>
<td>${last ? html`<ul class="plain">${Object.entries(last.counts).map(([k, v]) => html`<li>${k} ${v}</li>`)}</ul>` : '—'}</td>
<td>${alerts.length === 0 ? 'raises none' : html`<ul class="plain">${alerts.map(([kind, n]) => html`<li><a href="${alertsHref(kind)}">${n} ${kind}</a></li>`)}</ul>`}</td>
<td>${r.current ? html`since <time>${r.current.startedAt}</time>` : '—'}</td>
<td>${workflowCell(links, last?.workflowId ?? null)}</td></tr>`;
}

/** The reconciliations' last passes, then the open alerts (of one kind when `kind` is set). */
export function alertsPage(
  data: { runs: ReconciliationRunView[]; alerts: OperatorAlertView[]; nextCursor: string | null; kind: string | null },
  links: Links,
): Html {
  const more = data.nextCursor
    ? `/console/alerts?${new URLSearchParams({ ...(data.kind ? { kind: data.kind } : {}), cursor: data.nextCursor }).toString()}#open-alerts`
    : null;
  return html`<h1>Alerts</h1>
<section aria-labelledby="reconciliations"><h2 id="reconciliations">Reconciliations: the last pass of each</h2>
<p class="help">Run by Temporal Schedules. A pass's discrepancies are its open alerts (a deposit pass's, the deposits it reversed).</p>
<table><thead><tr><th scope="col">Reconciliation</th><th scope="col">Last pass finished</th><th scope="col">Started</th><th scope="col">Outcome</th><th scope="col">Counts</th><th scope="col">Open alerts</th><th scope="col">In progress</th><th scope="col">Workflow</th></tr></thead><tbody>
${data.runs.map((r) => runRow(r, links))}
</tbody></table>
</section>
<section aria-labelledby="open-alerts"><h2 id="open-alerts">Open alerts${data.kind ? html` of kind <span class="mono">${data.kind}</span>` : ''} (${data.alerts.length}${more ? '+' : ''})</h2>
${data.kind ? html`<p><a href="/console/alerts#open-alerts">All open alerts</a></p>` : ''}
${
  data.alerts.length === 0
    ? html`<p>No open alerts${data.kind ? ' of this kind' : ''}.</p>`
    : html`<table class="alerts"><thead><tr><th scope="col">Kind</th><th scope="col">Severity</th><th scope="col">About</th><th scope="col">Since</th><th scope="col">Last seen</th><th scope="col">Detail</th></tr></thead><tbody>
${data.alerts.map((a) => html`<tr data-alert="${a.id}"><td>${a.kind}</td><td><span class="severity ${a.severity}">${a.severity}</span></td><td>${alertSubject(a)}</td><td><time>${a.createdAt}</time></td><td><time>${a.updatedAt}</time></td><td>${alertDetails(a.details)}</td></tr>`)}
</tbody></table>`
}
${more ? html`<p><a href="${more}">Older open alerts</a></p>` : ''}
</section>`;
}

export function messagePage(title: string, message: string): Html {
  return html`<h1>${title}</h1><p>${message}</p><p><a href="/console">Back to the console</a></p>`;
}

/** Served as /console/assets/console.css (style-src 'self'). Contrast ≥ 4.5:1 throughout. */
export const CONSOLE_CSS = `*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#1b1f24;background:#f6f7f9}
.bar{display:flex;gap:1.5em;align-items:center;flex-wrap:wrap;padding:.6em 1.5em;background:#1b2a41;color:#fff}
.bar a{color:#fff}.brand{font-weight:700;text-decoration:none}.bar nav a{margin-right:1em}
.logout{margin-left:auto;display:flex;gap:.6em;align-items:center}
main{max-width:1200px;margin:0 auto;padding:1em 1.5em 3em}h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}h3{margin:0;font-size:1.05em}
table{border-collapse:collapse;width:100%;background:#fff;font-size:.93em}th,td{text-align:left;padding:.45em .6em;border-bottom:1px solid #d5d9df;vertical-align:top}td:first-child a{word-break:break-all}th{white-space:nowrap}
th{background:#eceff3}.mono{font-family:ui-monospace,monospace;font-size:.92em;word-break:break-all}
a{color:#0b57d0}.state,.outcome{white-space:nowrap;padding:.1em .45em;border-radius:3px;font-size:.9em;background:#e6e8eb}
.requires_intervention,.refused,.failed,.discrepancies,.critical{background:#fde2e1;color:#8a1c13}.severity{white-space:nowrap;padding:.1em .45em;border-radius:3px;font-size:.9em;background:#e6e8eb}.warning{background:#fff1c2;color:#6a4a00}.clean{background:#dcf3e4;color:#145c32}
.plain{list-style:none;margin:0;padding:0}.plain li{overflow-wrap:anywhere}.retrying{background:#fff1c2;color:#6a4a00}.signalled,.created{background:#dcf3e4;color:#145c32}
.stack{display:flex;flex-direction:column;gap:.35em;max-width:28em}
input,select,button{font:inherit;padding:.45em .55em;border:1px solid #6b7480;border-radius:4px}
button{background:#0b57d0;color:#fff;border-color:#0b57d0;cursor:pointer;align-self:flex-start}
a.button{display:inline-block;padding:.45em .8em;border-radius:4px;background:#0b57d0;color:#fff;text-decoration:none}
.bar button{background:#fff;color:#1b2a41;border-color:#fff}
:focus-visible{outline:3px solid #f4b400;outline-offset:2px}
.actions{display:grid;grid-template-columns:repeat(auto-fit,minmax(16em,1fr));gap:1em}
.action-form{background:#fff;border:1px solid #d5d9df;border-radius:6px;padding:1em;max-width:none}.help{margin:0;color:#4a525c;font-size:.92em}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25em 1.2em;background:#fff;padding:1em;border:1px solid #d5d9df;border-radius:6px}
.facts dt{font-weight:600}.facts dd{margin:0;word-break:break-all}
.timeline{background:#fff;border:1px solid #d5d9df;border-radius:6px;padding:1em 1em 1em 2.5em}.timeline li{margin:.2em 0}
.error{background:#fde2e1;color:#8a1c13;padding:.6em .8em;border-radius:4px}.notice{background:#dcf3e4;color:#145c32;padding:.6em .8em;border-radius:4px}
`;

export function searchPage(q: string, hits: SearchHit[]): Html {
  return html`<h1>Find</h1>
<p>${hits.length === 0 ? html`Nothing matches <strong class="mono">${q}</strong>: a Payment, deposit or fund return id, a Payment's externalReference, or a transaction hash.` : html`${hits.length} match <strong class="mono">${q}</strong>, newest first.`}</p>
${
  hits.length === 0
    ? ''
    : html`<table><thead><tr><th scope="col">Item</th><th scope="col">App</th><th scope="col">Status</th><th scope="col">Matched on</th><th scope="col">Created</th></tr></thead><tbody>
${hits.map((h) => html`<tr data-id="${h.id}"><td><a href="${itemHref(h)}">${h.kind} ${h.id}</a></td><td class="mono">${h.appId}</td><td>${h.status}</td><td>${h.matched}</td><td><time>${h.createdAt}</time></td></tr>`)}
</tbody></table>`
}`;
}

export function dashboardUsersPage(
  csrf: string,
  appId: string | null,
  users: PartnerUserView[] | null,
  flash: { notice?: string; error?: string },
): Html {
  return html`<h1>Partner dashboard users</h1>
${flash.notice ? html`<p class="notice" role="status">${flash.notice}</p>` : ''}${flash.error ? html`<p class="error" role="alert">${flash.error}</p>` : ''}
<form method="get" action="/console/dashboard-users" class="stack"><label for="app">App id</label><input id="app" name="appId" type="text" maxlength="64" required value="${appId ?? ''}"><button type="submit">Show</button></form>
${
  appId && users
    ? html`<h2 id="users">Users of ${appId} (${users.length})</h2>
<table><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Invited by</th><th scope="col">Since</th></tr></thead><tbody>
${users.length === 0 ? html`<tr><td colspan="4">Nobody yet.</td></tr>` : users.map((u) => html`<tr><td>${u.email}</td><td>${u.role}</td><td>${u.invitedBy}</td><td><time>${u.createdAt}</time></td></tr>`)}
</tbody></table>
<h2 id="invite">Invite (or change a role)</h2>
<form method="post" action="/console/dashboard-users" class="stack action-form"><input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="appId" value="${appId}">
<label for="email">Email</label><input id="email" name="email" type="email" required maxlength="254">
<label for="role">Role</label><select id="role" name="role"><option>viewer</option><option>developer</option><option>admin</option></select>
<button type="submit">Invite</button></form>`
    : ''
}`;
}
