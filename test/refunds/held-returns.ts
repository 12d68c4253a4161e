import assert from 'node:assert/strict';
import { encodeAbiParameters, keccak256, pad, toHex, type Address, type Hash } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { createChainFaults } from '../../src/chain/chain-faults';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { call } from '../support/api-client';
import {
  eventually,
  newPayer,
  payTo,
  paysInToken,
  rpc,
  setNativeBalance,
  tokenBalance,
  withMiningPaused,
  type PendingTx,
} from '../support/chain';
import { getHarness } from '../support/harness';
import { until } from '../support/until';
import { createPayment, waitForPayment, type Merchant } from '../support/fixtures';

const USDC = (n: number) => BigInt(n) * 1_000_000n;

/** TestUSD's balanceOf is its storage slot 1 (contracts/TestUSD.sol): a holder's balance lives at keccak(holder, 1). */
const balanceSlot = (holder: string) => keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [holder as Address, 1n]));
const setTokenBalance = (holder: string, atomic: bigint) =>
  rpc('anvil_setStorageAt', [SANDBOX_TOKEN_ADDRESS, balanceSlot(holder), pad(toHex(atomic), { size: 32 })]);

export interface HeldRecovery {
  paymentId: string;
  escrow: string;
  escrowIndex: number;
  payer: PrivateKeyAccount;
  incidentId: string;
  recoveryId: string;
  amountAtomic: bigint;
  /** The leg that reverted. */
  revertedTxHash: Hash;
}

/**
 * A Payment of 2 USDC paid with 1 USDC too much (an excess incident), whose recovery to the payer is
 * held in requires_intervention for real: its leg is signed while the escrow holds the incident's
 * funds, and mined, on a held chain, in a block where the escrow's balance reads 0, so it reverts
 * (then the balance is put back: the books and the chain agree again, and nothing moved).
 */
export async function heldRecovery(m: Merchant): Promise<HeldRecovery> {
  const h = await getHarness();
  const p = (await createPayment(m, { amount: '2' })).body.payment;
  const escrow = (p.funding.depositAddress.address as string).toLowerCase();
  const payer = await newPayer(USDC(3));
  await payTo(payer, escrow, USDC(2));
  await payTo(payer, escrow, USDC(1));
  await waitForPayment(
    m,
    p.id,
    'succeeded with an excess incident',
    (x) => x.status === 'succeeded' && x.incidentRecoverySummary.count === 1,
  );
  const incidentId = (await call(`/v2/payments/${p.id}/incidents`, { credential: m.cred })).body.items[0].id as string;
  // Gas in place: the sender sends the leg without a top-up (which would wait for a block).
  await setNativeBalance(escrow, 10n ** 18n);
  const held = await tokenBalance(escrow);
  const faults = createChainFaults(h.rpcUrl);
  let leg: PendingTx | undefined;
  let recoveryId!: string;
  await withMiningPaused(async () => {
    try {
      const res = await call(`/v2/payments/${p.id}/incident-recoveries`, {
        credential: m.cred,
        headers: { 'idempotency-key': `held-${p.id}` },
        body: { incidentId },
      });
      assert.equal(res.status, 201, res.text);
      recoveryId = res.body.incidentRecovery.id;
      await until(
        async (saw) => {
          const pool = await rpc<{ pending?: Record<string, Record<string, PendingTx>> }>('txpool_content');
          leg = Object.values(pool.pending ?? {})
            .flatMap((byNonce) => Object.values(byNonce))
            .find((tx) => tx.from.toLowerCase() === escrow && paysInToken(tx, payer.address));
          saw({ leg: leg?.hash ?? null });
          return leg !== undefined;
        },
        'the recovery leg in the mempool',
        60_000,
      );
      await setTokenBalance(escrow, 0n);
      await faults.mine(1);
    } finally {
      await setTokenBalance(escrow, held);
    }
  });
  const receipt = await rpc<{ status: string }>('eth_getTransactionReceipt', [leg!.hash]);
  assert.equal(receipt.status, '0x0', 'the leg reverted');
  await eventually(
    async () => (await h.db.prisma.fundReturn.findUniqueOrThrow({ where: { id: recoveryId } })).status === 'requires_intervention',
    `${recoveryId} held`,
    { mine: true },
  );
  const row = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: p.id } });
  return {
    paymentId: p.id,
    escrow,
    escrowIndex: row.escrowIndex,
    payer,
    incidentId,
    recoveryId,
    amountAtomic: USDC(1),
    revertedTxHash: leg!.hash,
  };
}
