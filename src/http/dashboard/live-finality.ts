import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TFinality, TTransactionFinality } from '../../domain/chain/finality.schemas';
import { finalityStillMoving } from '../../domain/chain/pure/finality';
import { projectRoot } from '../../platform/project-root';
import { ZLiveFinality, type TLiveFinality } from './dashboard.schemas';

/**
 * The resource pages' live finality bars (docs/decisions/dashboard-and-console.md, "Live finality
 * bars"): the bars' words, whether they can still move, and the one script that asks again while they
 * can (public/dashboard/finality.js).
 */

/** How often the page asks again: the hosted checkout's status poll's pace. */
export const LIVE_FINALITY_POLL_MS = 2000;

/**
 * The page stops asking after this long with nothing changed, and says so: a leg broadcast before the
 * chain scanner recorded inclusions never counts up (decisions, "Live finality"), and a tab left open
 * on a held resource would otherwise ask for ever.
 */
export const LIVE_FINALITY_IDLE_STOP_MS = 10 * 60 * 1000;

export function confirmationsText(f: TTransactionFinality): string {
  if (f.blockNumber === null) return 'not mined yet';
  return `${f.confirmations} of ${f.confirmationsRequired} confirmations${f.finalized ? ' (final)' : ''}`;
}

/** A resource's bars (incoming transfers first, then its settlement legs), and whether they can still move. */
export function liveFinality(finality: TFinality, atRest: boolean): TLiveFinality {
  const rows = [
    ...finality.transfers.map((f) => ({ label: 'Incoming transfer', f })),
    ...finality.settlement.map((f) => ({ label: `Settlement (${f.leg.replace('_', ' ')})`, f })),
  ];
  return ZLiveFinality.parse({
    live: finalityStillMoving(finality, atRest),
    bars: rows.map(({ label, f }) => ({
      transactionHash: f.transactionHash,
      label,
      confirmations: f.confirmations,
      confirmationsRequired: f.confirmationsRequired,
      finalized: f.finalized,
      text: confirmationsText(f),
    })),
  });
}

/** The script, read once, named by its content hash (a new deploy is a new URL). */
export function loadFinalityScript(): { body: Buffer; url: string } {
  const body = readFileSync(path.join(projectRoot(), 'public', 'dashboard', 'finality.js'));
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  return { body, url: `/dashboard/assets/finality.js?v=${hash}` };
}
