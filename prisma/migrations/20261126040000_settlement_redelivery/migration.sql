-- The payment reconciliation pass re-reads the live legs of recently posted Payment settlements, the
-- longest unread first (src/domain/payments/payment-redelivery.ts): when it last read each leg, and a
-- partial index so a pass reads the recent live legs, not every leg ever recorded.
ALTER TABLE "settlement_legs" ADD COLUMN "rechecked_at" TIMESTAMPTZ(3);
CREATE INDEX "settlement_legs_live_payment_idx" ON "settlement_legs"("created_at") WHERE "source_type" = 'payment' AND "status" IN ('broadcast', 'confirmed');
