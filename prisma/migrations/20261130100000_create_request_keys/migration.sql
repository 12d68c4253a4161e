-- What a create ran under (its Idempotency-Key and request hash), kept on what it made: a 5xx releases
-- the key, and the identical retry finds the refund, recovery or used action and finishes it.
ALTER TABLE "fund_returns" ADD COLUMN "idempotency_key" TEXT,
ADD COLUMN "request_hash" TEXT;

CREATE UNIQUE INDEX "fund_returns_app_id_idempotency_key_key" ON "fund_returns"("app_id", "idempotency_key");

ALTER TABLE "payment_actions" ADD COLUMN "idempotency_key" TEXT,
ADD COLUMN "request_hash" TEXT,
ADD COLUMN "funding_operation_id" TEXT;
