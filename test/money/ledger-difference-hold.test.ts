import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { raiseAlert, resolveAlerts } from '../../src/domain/monitoring/alerts';
import { LEDGER_DIFFERENCE, ledgerAlertOf } from '../../src/domain/ledger/reconcile';
import { call, newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { cli, newPayer, send, TOKEN, USDC, waitForDeposits } from '../deposits/helpers';
import { endsWithBooksChecked } from '../support/books';
import { newAccountWithWallet, newDepositAddress } from '../support/fixtures';

const silent = { error: () => {}, info: () => {} };

/**
 * A difference where money is at stake holds the money: while reconciliation says money is missing at
 * an address, nothing new is paid out of it, and an operator releases it once the books are right.
 */
describe('Ledger difference hold', () => {
  endsWithBooksChecked();

  test('a deposit address with money missing holds its deposit (ledger_difference) and pays nothing; released with retry once the alert is resolved, it settles', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const { accountId, destination } = await newAccountWithWallet(cred);
    const deposit = await newDepositAddress(cred, accountId);
    // What the scheduled ledger pass raises when the chain holds less than the books say.
    const alert = ledgerAlertOf({
      address: deposit.address,
      purpose: 'deposit',
      book: `custody:deposit:${deposit.id}`,
      chainId: h.chainId,
      token: TOKEN,
      ledgerAtomic: String(3n * USDC),
      chainAtomic: '0',
      inFlightAtomic: '0',
      differenceAtomic: String(-3n * USDC),
    });
    assert.equal(alert.severity, 'critical');
    await raiseAlert({ prisma: h.db.prisma, logger: silent }, alert);

    await send(await newPayer(10n * USDC), deposit.address, 10n * USDC);
    const [held] = await waitForDeposits(accountId, (d) => d[0]?.status === 'requires_intervention', { mine: true, what: 'held' });
    assert.equal(held!.settlementReasonCode, 'ledger_difference');
    const chain = h.chain.chains.get(h.chainId);
    assert.equal(await chain.getTokenBalance({ token: TOKEN, owner: deposit.address as Address }), 10n * USDC);
    assert.equal(await chain.getTokenBalance({ token: TOKEN, owner: destination as Address }), 0n);
    assert.equal(await h.db.prisma.settlementLeg.count({ where: { sourceId: held!.id } }), 0);

    await resolveAlerts({ prisma: h.db.prisma, logger: silent }, LEDGER_DIFFERENCE, [alert.subject]);
    assert.deepEqual(await cli(['deposits', 'resolve', held!.id, '--action', 'retry', '--actor', 'ops:alice']), {
      depositId: held!.id,
      action: 'retry',
      signalled: true,
    });
    const [settled] = await waitForDeposits(accountId, (d) => d[0]?.status === 'settled', { mine: true, what: 'settled' });
    const paid = await chain.getTokenBalance({ token: TOKEN, owner: destination as Address });
    assert.equal(String(paid), settled!.netAtomic.toFixed());
    const balances = await call(`/v2/accounts/${accountId}/balances`, { credential: cred });
    assert.deepEqual(
      balances.body.balances.map((b: Record<string, string>) => b.settledAtomic),
      [String(paid)],
    );
  });
});
