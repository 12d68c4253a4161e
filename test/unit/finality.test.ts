import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  confirmationsAt,
  finalityOf,
  finalityStillMoving,
  type FinalitySubject,
  type ScannedHead,
} from '../../src/domain/chain/pure/finality';
import { liveFinality } from '../../src/http/dashboard/live-finality';
import { payerConfirmations } from '../../src/domain/checkout/checkout-view';
import { HTML_AREA_CSP, htmlAreaCspWithScript } from '../../src/http/html-area';
import { nextBlockTimeMs } from '../../src/domain/chain/pure/block-time';

const NOW = new Date('2026-09-09T12:00:00.000Z');
const block = fc.bigInt({ min: 0n, max: 10_000_000n });
const network = fc.record({ confirmations: fc.integer({ min: 1, max: 500 }), blockTimeMs: fc.integer({ min: 1, max: 60_000 }) });
const head = fc.record({
  block: fc.option(block, { nil: null }),
  at: fc.option(fc.date({ min: new Date('2026-09-09T11:00:00Z'), max: new Date('2026-09-09T13:00:00Z'), noInvalidDate: true }), {
    nil: null,
  }),
  blockTimeMs: fc.option(fc.integer({ min: 0, max: 60_000 }), { nil: null }),
});
const subject = fc.record({
  chainId: fc.constant(31337),
  transactionHash: fc.constant(`0x${'ab'.repeat(32)}`),
  blockNumber: fc.option(block, { nil: null }),
});

describe('Live finality (finalityOf)', () => {
  test('property: confirmations are never negative, and finalized exactly when they reach the depth', () => {
    fc.assert(
      fc.property(subject, head, network, (s: FinalitySubject, h: ScannedHead, n) => {
        const f = finalityOf(s, h, n, NOW);
        assert.ok(f.confirmations >= 0);
        assert.equal(f.finalized, f.confirmations >= n.confirmations);
        assert.equal(f.confirmationsRequired, n.confirmations);
      }),
      { numRuns: 500 },
    );
  });

  test('property: confirmations never fall as the head rises, and a lower head (a reorg moved the scanner back) never counts more', () => {
    fc.assert(
      fc.property(fc.option(block, { nil: null }), block, fc.bigInt({ min: 0n, max: 1000n }), (mined, h, up) => {
        assert.ok(confirmationsAt(mined, h + up) >= confirmationsAt(mined, h));
        // Once mined and read, each block more is one confirmation more.
        if (mined !== null && h >= mined) assert.equal(confirmationsAt(mined, h + 1n), confirmationsAt(mined, h) + 1);
      }),
      { numRuns: 500 },
    );
  });

  test('property: a transfer a reorg moved to a later block, or took off the chain, counts fewer confirmations at the same head', () => {
    fc.assert(
      fc.property(block, fc.bigInt({ min: 1n, max: 1000n }), fc.bigInt({ min: 0n, max: 1000n }), (mined, later, above) => {
        const h = mined + later + above;
        const before = confirmationsAt(mined, h);
        assert.ok(confirmationsAt(mined + later, h) < before, 'moved to a later block');
        assert.equal(confirmationsAt(null, h), 0, 'taken off the chain');
        assert.ok(before > 0);
      }),
      { numRuns: 500 },
    );
  });

  test('the estimate counts the missing blocks from the head block at the measured block time, never before now, and is null once final or when not mined', () => {
    const n = { confirmations: 5, blockTimeMs: 12_000 };
    const at = new Date(NOW.getTime() - 1000);
    const mined = { chainId: 1, transactionHash: '0x01', blockNumber: 100n };
    const f = finalityOf(mined, { block: 101n, at, blockTimeMs: 2000 }, n, NOW);
    assert.deepEqual([f.blockNumber, f.confirmations, f.finalized], [100, 2, false]);
    assert.equal(f.estimatedFinalAt, new Date(at.getTime() + 3 * 2000).toISOString(), 'three blocks at the measured 2 s');
    const unmeasured = finalityOf(mined, { block: 101n, at: null, blockTimeMs: null }, n, NOW);
    assert.equal(unmeasured.estimatedFinalAt, new Date(NOW.getTime() + 3 * 12_000).toISOString(), 'the configured block time from now');
    const stale = finalityOf(mined, { block: 101n, at: new Date(NOW.getTime() - 3_600_000), blockTimeMs: 2000 }, n, NOW);
    assert.equal(stale.estimatedFinalAt, NOW.toISOString(), 'a scanner behind: any moment now, never in the past');
    assert.equal(finalityOf(mined, { block: 104n, at, blockTimeMs: 2000 }, n, NOW).estimatedFinalAt, null, 'final');
    const pending = finalityOf({ ...mined, blockNumber: null }, { block: 104n, at, blockTimeMs: 2000 }, n, NOW);
    assert.deepEqual([pending.blockNumber, pending.confirmations, pending.finalized, pending.estimatedFinalAt], [null, 0, false, null]);
    assert.equal(
      finalityOf(mined, { block: null, at: null, blockTimeMs: null }, n, NOW).confirmations,
      0,
      'the scanner has read nothing yet',
    );
  });
});

describe('The measured block time (nextBlockTimeMs)', () => {
  const t = (s: number) => new Date(NOW.getTime() + s * 1000);

  test('a scan forward from a head of known time measures; a first measure is taken whole, later ones move the average by the blocks they cover', () => {
    assert.equal(
      nextBlockTimeMs({ nextFromBlock: 11n, headBlockAt: t(0), blockTimeMs: null }, { nextFromBlock: 16n, headBlockAt: t(10) }),
      2000,
    );
    assert.equal(
      nextBlockTimeMs({ nextFromBlock: 11n, headBlockAt: t(0), blockTimeMs: 2000 }, { nextFromBlock: 12n, headBlockAt: t(12) }),
      2500,
    );
    assert.equal(
      nextBlockTimeMs({ nextFromBlock: 11n, headBlockAt: t(0), blockTimeMs: 2000 }, { nextFromBlock: 31n, headBlockAt: t(240) }),
      12_000,
    );
  });

  test('property: nothing measured without a forward scan from a known time; the average stays within its samples', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 1000n }),
        fc.bigInt({ min: -5n, max: 600n }),
        fc.option(fc.integer({ min: 0, max: 60_000 }), { nil: null }),
        fc.integer({ min: 0, max: 3_600 }),
        fc.boolean(),
        (from, step, kept, seconds, known) => {
          const previous = { nextFromBlock: from, headBlockAt: known ? t(0) : null, blockTimeMs: kept };
          const next = { nextFromBlock: from + step, headBlockAt: t(seconds) };
          const measured = nextBlockTimeMs(previous, next);
          if (step <= 0n || !known) return assert.equal(measured, kept);
          const sample = (seconds * 1000) / Number(step);
          const lo = Math.min(sample, kept ?? sample);
          const hi = Math.max(sample, kept ?? sample);
          assert.ok(measured !== null && measured >= Math.floor(lo) && measured <= Math.ceil(hi), `${measured} in [${lo}, ${hi}]`);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("The dashboard's live finality bars (finalityStillMoving, liveFinality, the page's CSP)", () => {
  test('a page follows finality while a transaction is not final, or while money is on chain and the resource not at rest; never with nothing on chain', () => {
    const final = { finalized: true, blockNumber: 10 };
    const notYet = { finalized: false, blockNumber: 11 };
    const reorged = { finalized: false, blockNumber: null };
    const of = (transfers: (typeof final | typeof reorged)[], settlement: (typeof final)[] = []) => ({ transfers, settlement });
    assert.equal(finalityStillMoving(of([final], [notYet]), true), true, 'a leg still confirming after the resource came to rest');
    assert.equal(finalityStillMoving(of([final]), false), true, 'the transfer final, the settlement still to be sent');
    assert.equal(finalityStillMoving(of([final], [final]), true), false, 'at rest and every transaction final');
    assert.equal(finalityStillMoving(of([]), false), false, 'nothing on chain yet: nothing to follow');
    assert.equal(finalityStillMoving(of([reorged, final], [final]), true), false, 'at rest, a transfer a reorg took away holds nothing up');
    assert.equal(finalityStillMoving(of([reorged, final], [final]), false), true, 'not at rest, it may come back');
  });

  test("the dashboard's bars: incoming transfers, then legs, worded once, live as finalityStillMoving says", () => {
    const f = (n: number, blockNumber: number | null) => ({
      chainId: 31337,
      transactionHash: `0x${String(n).repeat(64)}`,
      blockNumber,
      confirmations: blockNumber === null ? 0 : n,
      confirmationsRequired: 2,
      finalized: blockNumber !== null && n >= 2,
      estimatedFinalAt: null,
    });
    const shown = liveFinality(
      {
        transfers: [f(3, 10)],
        settlement: [
          { ...f(1, 12), leg: 'platform_fee' },
          { ...f(0, null), leg: 'net' },
        ],
      },
      true,
    );
    assert.deepEqual(
      shown.bars.map((b) => [b.label, b.text, b.finalized]),
      [
        ['Incoming transfer', '3 of 2 confirmations (final)', true],
        ['Settlement (platform fee)', '1 of 2 confirmations', false],
        ['Settlement (net)', 'not mined yet', false],
      ],
    );
    assert.equal(shown.live, true);
    assert.equal(liveFinality({ transfers: [f(3, 10)], settlement: [] }, true).live, false);

    // A transfer a reorg took away: followed while the resource moves, and not once it is at rest.
    const reorged = { transfers: [f(2, null), f(3, 10)], settlement: [{ ...f(2, 12), leg: 'net' as const }] };
    assert.equal(liveFinality(reorged, true).live, false, 'at rest: nothing left to follow');
    assert.equal(liveFinality(reorged, false).live, true, 'not at rest: it may come back');
  });

  test("a live page's CSP is the area's, plus one nonce's script and calls back to its own origin; a nonce too short to be secret is refused", () => {
    const nonce = 'AAAAAAAAAAAAAAAAAAAAAAAA';
    assert.equal(htmlAreaCspWithScript(nonce), `${HTML_AREA_CSP}; script-src 'nonce-${nonce}'; connect-src 'self'`);
    assert.throws(() => htmlAreaCspWithScript('short'), /at least 16/);
    assert.throws(() => htmlAreaCspWithScript("AAAAAAAAAAAAAAAAAAAA' 'unsafe-inline"), /at least 16/);
  });
});

describe("The checkout page's bar (payerConfirmations)", () => {
  const transfer = (n: number, blockNumber: number | null, confirmations: number) => ({
    chainId: 31337,
    transactionHash: `0x${String(n).repeat(64)}`,
    blockNumber,
    confirmations,
    confirmationsRequired: 2,
    finalized: confirmations >= 2,
    estimatedFinalAt: confirmations >= 2 || blockNumber === null ? null : `2026-09-09T12:00:0${n}.000Z`,
  });

  test('the least deep transfer on chain with the latest estimate; one a reorg took away counts for nothing; none on chain, no bar', () => {
    assert.equal(payerConfirmations([]), null, 'nothing seen yet');
    assert.deepEqual(payerConfirmations([transfer(1, 10, 3), transfer(2, 12, 1), transfer(3, 11, 2)]), {
      confirmations: 1,
      confirmationsRequired: 2,
      finalized: false,
      estimatedFinalAt: '2026-09-09T12:00:02.000Z',
    });
    assert.equal(payerConfirmations([transfer(1, null, 0)]), null, 'the only transfer reorged away: the bar goes');
    assert.deepEqual(
      payerConfirmations([transfer(1, null, 0), transfer(2, 14, 2)]),
      { confirmations: 2, confirmationsRequired: 2, finalized: true, estimatedFinalAt: null },
      'paid again after a reorg: final once the transfer on chain is',
    );
  });
});
