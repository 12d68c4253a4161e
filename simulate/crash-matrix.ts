import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createPublicClient, http, parseAbiItem, type Address } from 'viem';
import { createApp } from '../src/domain/apps/apps';
import { createWebhookEndpoint } from '../src/domain/webhooks/endpoints';
import { API_CRASH_POINTS, formatCrashTarget, parseCrashTarget, type CrashTarget } from '../src/platform/crash-points';
import { ChainDriver, recipientWallet } from './chain-driver';
import {
  atRest,
  FLOW_NAMES,
  FLOWS,
  paymentBody,
  payPayment,
  statusOf,
  until,
  type FlowName,
  type Matrix,
  type Resource,
} from './crash-flows';
import { runMain } from './run-main';
import { PartnerClient } from './partner';
import { createRecipient } from './run';
import { freePort } from '../src/embedded/process';
import { ServiceProcess, stackSettings, startStack, type Stack } from './stack';
import { checkBooks } from './verify';
import { WebhookReceiver } from './webhook-receiver';

/**
 * `npm run crash-matrix`: kill -9 at every boundary of each money flow (receive Payments, deposits,
 * refunds, incident recoveries, bank payouts, vault funding; simulate/crash-flows.ts), and the API
 * mid-request, then check that each run converges (docs/testing.md, "Crash matrix").
 *
 * The cells come from the code, not from a list kept by hand: a clean run of each lifecycle with
 * CRASH_POINTS_TRACE records every crash point the activities of its workflow (and the settlement sender
 * inside them) pass, in order; each point becomes a cell at its first hit, and each hit of a
 * transition-writing activity (persist*, record*: one transition, its events and postings) is a cell of
 * its own, once per step (a step run again hits its points again: not a new cell). Polls (verify, check) repeat a number of times that depends on timing, so only their first
 * hit is a cell. The API cells are the points of API_CRASH_POINTS.
 *
 * A cell: what the flow acts on is made with a clean worker (a paid Payment to refund, a funded vault);
 * then the worker is started with CRASH_AT=<point>#<n>; the resource is driven through the API and the
 * sandbox chain; the process dies by SIGKILL at the point; it is started again without CRASH_AT; the
 * resource must then come to rest as the clean run's did, with the books balanced and equal to the
 * chain, no settlement leg on chain but once (and none that is not the one recorded), and every
 * committed event delivered, signature verified, to a local receiver.
 */

const USAGE = `usage: npm run crash-matrix -- [--cell <name>]... [--lifecycle <l>]... [--subset] [--list]
  --cell <name>  run only this cell (repeatable), e.g. --cell payment:settlement.leg.after-broadcast
  --lifecycle l  run only this lifecycle's cells (repeatable): ${[...FLOW_NAMES, 'api'].join(', ')};
                 two runs on separate DATA_DIRs can share the matrix
  --subset       the cells npm test runs (${'`'}test/crash/crash-matrix.test.ts${'`'})
  --list         print the cells (after the clean runs that enumerate them) and stop
  DATA_DIR (default <repo>/.data/crash-matrix); ports as for npm run simulate.`;

export type Lifecycle = FlowName | 'api';
const LIFECYCLES: readonly Lifecycle[] = [...FLOW_NAMES, 'api'];

export interface Cell {
  lifecycle: Lifecycle;
  target: CrashTarget;
}

/**
 * The subset in npm test: a worker killed after a leg's broadcast, before it is recorded as sent (the
 * cell where money could go out twice). Each cell costs minutes of waiting, and the suite's budget is
 * ten; `npm run crash-matrix` runs every cell.
 */
export const CRASH_SUBSET = ['payment:settlement.leg.after-broadcast'];

const CRASH_WAIT_MS = 180_000;
/** A settlement attempt lost with its worker fails at its 2-minute timeout, then backs off: minutes. */
const CONVERGE_MS = 600_000;
const EVENTS_MS = 120_000;
const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

export const cellName = (c: Cell) => `${c.lifecycle}:${formatCrashTarget(c.target)}`;

function isLifecycle(name: string): name is Lifecycle {
  return (LIFECYCLES as readonly string[]).includes(name);
}

function parseCell(name: string): Cell {
  const i = name.indexOf(':');
  const lifecycle = name.slice(0, i);
  if (!isLifecycle(lifecycle)) throw new Error(`a cell is <${LIFECYCLES.join('|')}>:<point>[#n], got ${name}\n${USAGE}`);
  return { lifecycle, target: parseCrashTarget(name.slice(i + 1)) };
}

interface TraceLine {
  point: string;
  n: number;
  workflowType?: string;
  /** The step's run and activity id (activities/crash-points.ts): a re-run of one step has the same. */
  runId?: string;
  activityId?: string;
}

/** The cells of one lifecycle, from the trace of its clean run (the rule is in the comment at the top). */
export function cellsFromTrace(lifecycle: FlowName, lines: TraceLine[]): Cell[] {
  const { workflowType } = FLOWS[lifecycle];
  const seen = new Set<string>();
  const cells: Cell[] = [];
  for (const l of lines) {
    const ours = l.workflowType === workflowType || (l.workflowType === undefined && l.point.startsWith('settlement.'));
    if (!ours) continue;
    const transition = /^activity\.(persist|record)\w*\.(before|after)$/.test(l.point);
    // A transition write is a cell per step, not per hit: a step run again (a local activity whose
    // task's completion the server refused) hits its points again, in some runs and not others.
    const key = transition ? `${l.point}|${l.runId ?? ''}|${l.activityId ?? l.n}` : l.point;
    if (seen.has(key)) continue;
    seen.add(key);
    cells.push({ lifecycle, target: { point: l.point, occurrence: l.n } });
  }
  return cells;
}

/** What a resource left behind: compared between a crashed run and the clean one. */
interface Outcome {
  status: string;
  postingLegs: string[];
  settlementLegs: string[];
  eventNames: string[];
}

/** Waits until the resource is at rest, then until the app's events all reached the receiver. */
async function converge(m: Matrix, r: Resource): Promise<void> {
  await atRest(m, r, CONVERGE_MS);
  await until('every committed event delivered', EVENTS_MS, async () => {
    const events = await m.stack.db.prisma.event.findMany({ where: { appId: m.credential.appId }, select: { id: true } });
    return events.every((e) => m.receiver.delivered.has(e.id)) ? true : undefined;
  });
}

/** A leg's name with the ids in it (`refund:<id>`) left out: each run has its own. */
const withoutIds = (leg: string) =>
  leg
    .split(':')
    .map((part) => (part.length >= 22 && part.includes('_') ? '<id>' : part))
    .join(':');

async function outcomeOf(m: Matrix, r: Resource): Promise<Outcome> {
  const prisma = m.stack.db.prisma;
  const all = [r, ...(r.also ?? [])];
  const status = (await Promise.all(all.map((one) => statusOf(m, one)))).join(' / ');
  const postings = await prisma.ledgerPosting.findMany({
    where: { OR: all.flatMap((one) => one.postings).map((s) => ({ sourceType: s.type, sourceId: s.id })) },
    select: { leg: true },
  });
  const legs = await prisma.settlementLeg.findMany({
    where: { OR: all.flatMap((one) => one.legs).map((s) => ({ sourceType: s.type, sourceId: s.id })) },
    select: { leg: true, status: true, sourceType: true },
  });
  // In order within each resource; two resources' events (a vault's and the Payment it pays) interleave as their workflows ran.
  const resourceIds = all.flatMap((one) => one.events);
  const events = await prisma.event.findMany({
    where: { resourceId: { in: resourceIds } },
    select: { name: true, resourceId: true },
    orderBy: { sequence: 'asc' },
  });
  events.sort((a, b) => resourceIds.indexOf(a.resourceId) - resourceIds.indexOf(b.resourceId));
  return {
    status,
    postingLegs: postings.map((p) => withoutIds(p.leg)).sort(),
    settlementLegs: legs.map((l) => `${l.sourceType}:${l.leg}:${l.status}`).sort(),
    eventNames: events.map((e) => e.name),
  };
}

/**
 * The three properties, plus "as the clean run ended": the books (ledger check, ledger reconcile); the
 * legs on chain (every token transfer out of an address that settles, a vault or an escrow returning
 * funds, is a recorded leg, each once); every event delivered and verified.
 */
async function check(m: Matrix, r: Resource, reference: Outcome | undefined): Promise<string[]> {
  const problems: string[] = [];
  const outcome = await outcomeOf(m, r);
  if (reference) {
    for (const key of ['status', 'postingLegs', 'settlementLegs', 'eventNames'] as const) {
      const got = JSON.stringify(outcome[key]);
      const want = JSON.stringify(reference[key]);
      if (got !== want) problems.push(`${key} ${got}, the clean run ${want}`);
    }
  }
  problems.push(...(await checkBooks(m.stack)).problems);
  problems.push(...(await checkLegsOnChain(m)));
  const events = await m.stack.db.prisma.event.findMany({ where: { appId: m.credential.appId }, select: { id: true, name: true } });
  for (const e of events) if (!m.receiver.delivered.has(e.id)) problems.push(`event ${e.id} (${e.name}) never delivered`);
  for (const refused of m.receiver.refused.splice(0)) problems.push(`a webhook request failed verification: ${refused}`);
  return problems;
}

/** Every token transfer out of a leg's sender (in any token a leg moves) is one recorded leg, once, as recorded. */
async function checkLegsOnChain(m: Matrix): Promise<string[]> {
  const problems: string[] = [];
  const legs = await m.stack.db.prisma.settlementLeg.findMany({
    select: {
      txHash: true,
      fromAddress: true,
      toAddress: true,
      tokenAddress: true,
      amountAtomic: true,
      status: true,
      leg: true,
      sourceId: true,
    },
  });
  const perLeg = new Map<string, number>();
  for (const l of legs) perLeg.set(`${l.sourceId}:${l.leg}`, (perLeg.get(`${l.sourceId}:${l.leg}`) ?? 0) + 1);
  for (const [leg, n] of perLeg) if (n > 1) problems.push(`settlement leg ${leg} signed ${n} times`);
  const senders = [...new Set(legs.map((l) => l.fromAddress.toLowerCase()))] as Address[];
  if (senders.length === 0) return problems;
  const tokens = [...new Set(legs.map((l) => l.tokenAddress.toLowerCase()))] as Address[];
  const client = createPublicClient({ transport: http(m.stack.rpcUrl), cacheTime: 0 });
  const logs = await client.getLogs({ address: tokens, event: TRANSFER_EVENT, args: { from: senders }, fromBlock: 0n, toBlock: 'latest' });
  const onChain = new Map<string, number>();
  for (const log of logs) {
    const tx = log.transactionHash.toLowerCase();
    onChain.set(tx, (onChain.get(tx) ?? 0) + 1);
    const leg = legs.find((l) => l.txHash.toLowerCase() === tx);
    if (!leg) problems.push(`transfer ${tx} out of ${log.args.from} is no recorded settlement leg`);
    else if (
      leg.toAddress.toLowerCase() !== log.args.to?.toLowerCase() ||
      leg.amountAtomic.toFixed() !== String(log.args.value) ||
      leg.tokenAddress.toLowerCase() !== log.address.toLowerCase()
    ) {
      problems.push(
        `transfer ${tx} pays ${log.args.value} of ${log.address} to ${log.args.to}, its leg ${leg.amountAtomic.toFixed()} of ${leg.tokenAddress} to ${leg.toAddress}`,
      );
    }
  }
  for (const [tx, n] of onChain) if (n > 1) problems.push(`transaction ${tx} moved tokens out ${n} times`);
  for (const l of legs)
    if (l.status === 'confirmed' && !onChain.has(l.txHash.toLowerCase()))
      problems.push(`leg ${l.sourceId}:${l.leg} confirmed but not on chain`);
  return problems;
}

/** The worker runs clean (no CRASH_AT): restarted if it runs with other settings. */
async function plainWorker(m: Matrix, env: Record<string, string> = {}): Promise<void> {
  await m.stack.worker.halt();
  m.stack.worker.start(env);
  await m.stack.worker.ready();
}

async function expectKilled(p: ServiceProcess, point: string): Promise<void> {
  const exit = await p.exit(CRASH_WAIT_MS).catch(() => {
    throw new Error(`the ${p.role} never reached ${point} (still running after ${CRASH_WAIT_MS / 1000} s)`);
  });
  if (exit.signal !== 'SIGKILL') throw new Error(`the ${p.role} exited (${exit.signal ?? exit.code}) but was not killed at ${point}`);
}

/**
 * One resource of the flow through its lifecycle: what it acts on prepared with a clean worker, then
 * the worker traced, or dying at `crash` and started again. The crash point's hits count from the
 * restart, so a cell's occurrence is the flow's own.
 */
async function runLifecycle(m: Matrix, name: FlowName, crash: CrashTarget | undefined, traceFile?: string): Promise<Resource> {
  const flow = FLOWS[name];
  const env: Record<string, string> = crash ? { CRASH_AT: formatCrashTarget(crash) } : traceFile ? { CRASH_POINTS_TRACE: traceFile } : {};
  let prepared: Record<string, string> | undefined;
  if (flow.prepare) {
    await plainWorker(m);
    prepared = await flow.prepare(m);
  }
  await plainWorker(m, env);
  const find = await flow.start(m, prepared);
  if (crash) {
    await expectKilled(m.stack.worker, formatCrashTarget(crash));
    m.stack.worker.start();
    await m.stack.worker.ready();
  }
  const resource = await until(`the ${name}'s row`, CONVERGE_MS, find);
  await converge(m, resource);
  return resource;
}

/** The API killed at `crash` while it creates a Payment; the partner's retry (same key, same body) must yield one Payment. */
async function runApiCell(m: Matrix, crash: CrashTarget): Promise<{ resource: Resource; problems: string[] }> {
  await plainWorker(m);
  const port = await freePort();
  const api = new ServiceProcess('api', { ...m.stack.serviceEnv, PORT: String(port) });
  try {
    api.start({ CRASH_AT: formatCrashTarget(crash) });
    await api.ready();
    m.serial += 1;
    const key = `crash-matrix-${m.serial}`;
    const client = new PartnerClient(`http://127.0.0.1:${port}`, m.credential, { giveUpAfterMs: 240_000 });
    // Retried through the crash: connection refused while the API is down, then request_in_progress
    // until the dead request's claim on the key expires (60 s), then the retry takes the key over.
    const answer = client.post('/v2/payments', paymentBody(m, key), key);
    await expectKilled(api, formatCrashTarget(crash));
    api.start();
    await api.ready();
    const created = await answer;
    const problems: string[] = [];
    const rows = await m.stack.db.prisma.payment.findMany({
      where: { appId: m.credential.appId, externalReference: key },
      select: { id: true },
    });
    if (rows.length !== 1 || rows[0]!.id !== created.body.payment.id) {
      problems.push(
        `the retried create answered ${created.status} ${created.body.payment?.id}; Payments with its reference: ${JSON.stringify(rows.map((r) => r.id))}`,
      );
    }
    const resource = await payPayment(m, created);
    await converge(m, resource);
    return { resource, problems };
  } finally {
    await api.stop();
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      cell: { type: 'string', multiple: true },
      lifecycle: { type: 'string', multiple: true },
      subset: { type: 'boolean' },
      list: { type: 'boolean' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const started = Date.now();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const wanted = values.subset ? CRASH_SUBSET.map(parseCell) : (values.cell ?? []).map(parseCell);
  const lifecycles = (values.lifecycle ?? [...LIFECYCLES]) as Lifecycle[];
  for (const l of lifecycles) if (!isLifecycle(l)) throw new Error(`--lifecycle takes ${LIFECYCLES.join(', ')}, got ${l}\n${USAGE}`);
  const inScope = (c: Cell) => lifecycles.includes(c.lifecycle) && (wanted.length === 0 || wanted.some((w) => cellName(w) === cellName(c)));
  // The API cells drive Payments: they compare with the clean Payment run.
  const needs = (l: Lifecycle) =>
    (wanted.length ? wanted.map((c) => c.lifecycle) : lifecycles).some((w) => w === l || (l === 'payment' && w === 'api'));

  const { dataDir, ports, config } = await stackSettings({
    defaultDataDir: path.join('.data', 'crash-matrix'),
    overrides: { RATE_LIMIT_POINTS: '1000000' },
  });
  out(`crash-matrix: data in ${dataDir}${wanted.length ? `; cells ${wanted.map(cellName).join(', ')}` : '; every cell'}`);
  const receiver = await WebhookReceiver.start();
  let stack: Stack | undefined;
  const stopAll = async () => {
    const s = stack;
    stack = undefined;
    await s?.stop();
    await receiver.stop();
  };
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));
  process.once('SIGTERM', () => void stopAll().finally(() => process.exit(130)));

  const results: Array<{ cell: string; ok: boolean; seconds: number; problems: string[] }> = [];
  try {
    stack = await startStack({
      config,
      dataDir,
      ports,
      log: (line) => out(`  ${line}`),
      databaseName: 'partner_payments_crash_matrix',
      serviceEnv: { WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: 'true' },
      startWorker: false,
      sandboxProvider: needs('payout'),
    });
    const credential = await createApp(stack.db.prisma, { name: 'crash-matrix', environment: 'sandbox' }, stack.environments.apiVersion);
    const endpoint = await createWebhookEndpoint(
      { prisma: stack.db.prisma, serviceSecret: stack.serviceSecret, destinations: { allowPrivateDestinations: true } },
      credential.appId,
      { url: receiver.url },
    );
    receiver.useSecret(endpoint.signingSecret);
    const client = new PartnerClient(stack.apiUrl, credential);
    const driver = new ChainDriver(stack, 1);
    await driver.fund();
    const m: Matrix = {
      stack,
      client,
      credential,
      receiver,
      driver,
      log: out,
      serial: 0,
      recipient: await createRecipient(client, stack.chainId, 'crash-matrix', recipientWallet(1, 0)),
    };

    // The clean runs: the reference outcomes, and (traced) the cells.
    const references = new Map<Lifecycle, Outcome>();
    const cells: Cell[] = [];
    for (const kind of FLOW_NAMES) {
      if (!needs(kind)) continue;
      const trace = path.join(dataDir, `crash-points-${kind}.jsonl`);
      rmSync(trace, { force: true });
      const t0 = Date.now();
      const resource = await runLifecycle(m, kind, undefined, trace);
      const reference = await outcomeOf(m, resource);
      references.set(kind, reference);
      const lines = readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as TraceLine);
      const found = cellsFromTrace(kind, lines);
      cells.push(...found);
      out(`clean ${kind} run: ${reference.status} in ${Math.round((Date.now() - t0) / 1000)} s; ${found.length} cells`);
      const problems = await check(m, resource, undefined);
      if (problems.length) results.push({ cell: `${kind}:clean`, ok: false, seconds: 0, problems });
    }
    if (references.has('payment')) references.set('api', references.get('payment')!);
    if (needs('api'))
      cells.push(...Object.values(API_CRASH_POINTS).map((point): Cell => ({ lifecycle: 'api', target: { point, occurrence: 1 } })));

    const names = new Set(cells.map(cellName));
    const unknown = wanted.filter((c) => !names.has(cellName(c)));
    if (unknown.length) throw new Error(`no such cell: ${unknown.map(cellName).join(', ')}; the cells are:\n  ${[...names].join('\n  ')}`);
    if (values.list) {
      for (const n of names) out(n);
      return 0;
    }
    const toRun = wanted.length ? wanted.filter(inScope) : cells.filter(inScope);
    out(`${toRun.length} cells`);
    for (const cell of toRun) {
      const name = cellName(cell);
      const t0 = Date.now();
      let problems: string[];
      try {
        if (cell.lifecycle === 'api') {
          const r = await runApiCell(m, cell.target);
          problems = [...r.problems, ...(await check(m, r.resource, references.get('api')))];
        } else {
          const resource = await runLifecycle(m, cell.lifecycle, cell.target);
          problems = await check(m, resource, references.get(cell.lifecycle));
        }
      } catch (err) {
        problems = [err instanceof Error ? err.message : String(err)];
      }
      const seconds = Math.round((Date.now() - t0) / 1000);
      results.push({ cell: name, ok: problems.length === 0, seconds, problems });
      out(`cell ${name}: ${problems.length === 0 ? 'ok' : 'FAILED'} (${seconds} s)`);
      for (const p of problems) out(`  - ${p}`);
    }
  } catch (err) {
    results.push({ cell: 'setup', ok: false, seconds: 0, problems: [err instanceof Error ? (err.stack ?? err.message) : String(err)] });
    out(`crash-matrix FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    await stopAll();
  }
  const ok = results.every((r) => r.ok);
  const seconds = Math.round((Date.now() - started) / 1000);
  out(`crash-matrix: ${results.filter((r) => r.ok).length}/${results.length} cells passed in ${seconds} s`);
  out(`summary: ${JSON.stringify({ ok, seconds, cells: results })}`);
  return ok ? 0 : 1;
}

if (require.main === module) runMain('crash-matrix', main);
