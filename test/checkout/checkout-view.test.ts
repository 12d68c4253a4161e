import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  checkoutPhaseOf,
  eip681TransferUri,
  PAYABLE_PHASES,
  toCheckoutStatus,
  type CheckoutPaymentState,
} from '../../src/domain/checkout/checkout-view';
import { CHECKOUT_PHASES, ZCheckoutStatus } from '../../src/domain/checkout/checkout-view.schemas';
import type { PaymentStatus } from '../../src/domain/payments/pure/payment-machine';
import type { Payment } from '../../src/generated/prisma/client';

const STATUSES: PaymentStatus[] = ['requires_payment_method', 'processing', 'accepted', 'succeeded', 'failed', 'cancelled', 'expired'];
const TERMINAL = new Set<PaymentStatus>(['succeeded', 'failed', 'cancelled', 'expired']);
const NOW = new Date('2026-11-23T08:00:00.000Z');
const TOKEN = '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5';
const ESCROW = '0x1111111111111111111111111111111111111111';

const arbState = fc.record({
  status: fc.constantFrom(...STATUSES),
  amountAtomic: fc.bigInt({ min: 1n, max: 10n ** 30n }),
  receivedAtomic: fc.bigInt({ min: 0n, max: 10n ** 30n }),
  pendingAtomic: fc.bigInt({ min: 0n, max: 10n ** 30n }),
  expiresAt: fc.integer({ min: -86_400_000, max: 86_400_000 }).map((ms) => new Date(NOW.getTime() + ms)),
});

/** A Payment row as Prisma reads it (Decimals as their string form is all toCheckoutStatus uses). */
function row(s: CheckoutPaymentState, extra: Partial<Payment> = {}): Payment {
  return {
    id: 'payment_test',
    status: s.status,
    statusVersion: 3,
    amountAtomic: s.amountAtomic.toString(),
    receivedAtomic: s.receivedAtomic.toString(),
    pendingAtomic: s.pendingAtomic.toString(),
    expiresAt: s.expiresAt,
    decimals: 6,
    assetCode: 'USDC',
    chainId: 31337,
    tokenAddress: TOKEN,
    escrowAddress: ESCROW,
    returnUrl: null,
    ...extra,
  } as unknown as Payment;
}

describe('Hosted checkout: the payer phase of a Payment', () => {
  test('every Payment state maps to exactly one known phase, and the same state always to the same one', () => {
    fc.assert(
      fc.property(arbState, (s) => {
        const phase = checkoutPhaseOf(s, NOW);
        assert.ok((CHECKOUT_PHASES as readonly string[]).includes(phase), phase);
        assert.equal(checkoutPhaseOf({ ...s }, NOW), phase);
      }),
    );
  });

  test('terminal and accepted Payments never show the deposit address as payable; a status phase is the status itself', () => {
    fc.assert(
      fc.property(arbState, (s) => {
        const phase = checkoutPhaseOf(s, NOW);
        const status = toCheckoutStatus(row(s), NOW);
        if (TERMINAL.has(s.status) || s.status === 'accepted') {
          assert.equal(phase, s.status);
          assert.equal(status.payable, null);
        }
        // Only the payable phases offer the address, and never for nothing, nor after the deadline.
        if (status.payable) {
          assert.ok(PAYABLE_PHASES.has(phase), phase);
          assert.ok(BigInt(status.payable.amountAtomic) > 0n);
          assert.ok(s.expiresAt.getTime() > NOW.getTime());
          assert.equal(BigInt(status.payable.amountAtomic), s.amountAtomic - s.receivedAtomic - s.pendingAtomic);
        }
        ZCheckoutStatus.parse(status);
      }),
    );
  });

  test('open Payments: nothing seen awaits payment, short funds confirming are seen, full ones confirming, short confirmed funds underpaid', () => {
    const open = (received: bigint, pending: bigint, expiresInMs = 60_000) =>
      checkoutPhaseOf(
        {
          status: 'processing',
          amountAtomic: 10n,
          receivedAtomic: received,
          pendingAtomic: pending,
          expiresAt: new Date(NOW.getTime() + expiresInMs),
        },
        NOW,
      );
    assert.equal(
      checkoutPhaseOf(
        {
          status: 'requires_payment_method',
          amountAtomic: 10n,
          receivedAtomic: 0n,
          pendingAtomic: 0n,
          expiresAt: new Date(NOW.getTime() + 1),
        },
        NOW,
      ),
      'awaiting_payment',
    );
    assert.equal(open(0n, 4n), 'seen');
    assert.equal(open(0n, 10n), 'confirming');
    assert.equal(open(6n, 4n), 'confirming');
    assert.equal(open(0n, 12n), 'confirming');
    assert.equal(open(4n, 0n), 'underpaid');
    // At the deadline: expired unless funds are still confirming (they count; nothing more is asked).
    assert.equal(open(4n, 0n, 0), 'expired');
    assert.equal(open(0n, 0n, -1), 'expired');
    assert.equal(open(0n, 4n, 0), 'confirming');
  });

  test('the payable amount is what is still owed, and its QR text is the EIP-681 transfer of exactly that', () => {
    const status = toCheckoutStatus(
      row({
        status: 'processing',
        amountAtomic: 12_500_000n,
        receivedAtomic: 2_500_000n,
        pendingAtomic: 0n,
        expiresAt: new Date(NOW.getTime() + 60_000),
      }),
      NOW,
    );
    assert.equal(status.phase, 'underpaid');
    assert.equal(status.receivedAmount, '2.5');
    assert.deepEqual(status.payable, {
      address: ESCROW,
      amount: '10',
      amountAtomic: '10000000',
      uri: `ethereum:${TOKEN}@31337/transfer?address=${ESCROW}&uint256=10000000`,
    });
  });
});

describe('Hosted checkout: EIP-681 URIs', () => {
  test('an ERC-20 transfer URI names the token, the chain, the recipient and the atomic amount, for any amount', () => {
    assert.equal(
      eip681TransferUri({ tokenAddress: TOKEN, chainId: 1, to: ESCROW, amountAtomic: 12_500_000n }),
      `ethereum:${TOKEN}@1/transfer?address=${ESCROW}&uint256=12500000`,
    );
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), fc.integer({ min: 1, max: 2 ** 31 }), (amountAtomic, chainId) => {
        const uri = eip681TransferUri({ tokenAddress: TOKEN, chainId, to: ESCROW, amountAtomic });
        const match = /^ethereum:(0x[0-9a-fA-F]{40})@(\d+)\/transfer\?address=(0x[0-9a-fA-F]{40})&uint256=(\d+)$/.exec(uri);
        assert.ok(match, uri);
        assert.deepEqual([match[1], Number(match[2]), match[3], BigInt(match[4]!)], [TOKEN, chainId, ESCROW, amountAtomic]);
      }),
    );
    assert.throws(() => eip681TransferUri({ tokenAddress: TOKEN, chainId: 1, to: ESCROW, amountAtomic: -1n }));
  });
});
