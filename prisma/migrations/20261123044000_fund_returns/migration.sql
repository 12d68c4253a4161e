-- Returns of funds: refunds of a succeeded Payment (paid from the recipient's vault) and recoveries of
-- an incident's funds (paid from the Payment's escrow). One row per request; sent by the one settlement
-- sender (settlement_legs source_type 'refund' | 'incident_recovery', source_id = this id).
CREATE TABLE "fund_returns" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "incident_id" TEXT,
    "vault_id" TEXT,
    "status" TEXT NOT NULL,
    "status_version" INTEGER NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "token_address" TEXT NOT NULL,
    "from_address" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "amount_atomic" DECIMAL(78,0) NOT NULL,
    "reason" TEXT,
    "requested_by" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "transaction_hash" TEXT,
    "failure_reason" TEXT,
    "broadcast_at" TIMESTAMPTZ(3),
    "confirmed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "fund_returns_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "fund_returns_kind_known" CHECK ("kind" IN ('refund', 'incident_recovery')),
    CONSTRAINT "fund_returns_status_known" CHECK ("status" IN ('pending', 'broadcast', 'confirmed', 'failed', 'requires_intervention')),
    CONSTRAINT "fund_returns_amount_positive" CHECK ("amount_atomic" > 0),
    CONSTRAINT "fund_returns_source" CHECK (("kind" = 'refund' AND "vault_id" IS NOT NULL) OR ("kind" = 'incident_recovery' AND "incident_id" IS NOT NULL))
);
CREATE INDEX "fund_returns_payment_id_idx" ON "fund_returns"("payment_id");
-- An incident is recovered once: at most one recovery that has not failed (a failed one may be retried).
CREATE UNIQUE INDEX "fund_returns_incident_live_key" ON "fund_returns"("incident_id") WHERE "status" <> 'failed';
ALTER TABLE "fund_returns" ADD CONSTRAINT "fund_returns_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "fund_returns" ADD CONSTRAINT "fund_returns_incident_id_fkey" FOREIGN KEY ("incident_id") REFERENCES "payment_incidents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
