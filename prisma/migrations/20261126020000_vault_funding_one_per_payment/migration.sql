-- One vault payment per Payment: at most one funding operation that is not failed (authorize checks
-- it under the Payment's row lock; the index makes a second one impossible, whatever the path).
--
-- Rows written before the rule may already break it. Of a Payment's live operations, the one that
-- moved money (or else the first authorized) is kept. Another that never sent anything (authorized,
-- no leg on chain) is failed, which releases its reserve. Another that did send is money already
-- gone: it keeps its status for reconcile and the operator, marked as a duplicate from before the
-- rule, and only such rows stand outside the index.
ALTER TABLE "vault_funding_operations" ADD COLUMN "duplicate_before_rule" BOOLEAN NOT NULL DEFAULT false;

CREATE TEMPORARY TABLE "vault_funding_ranked" ON COMMIT DROP AS
SELECT s."id", s."sent",
       row_number() OVER (PARTITION BY s."payment_id" ORDER BY s."sent" DESC, s."authorized_at", s."id") AS "rank"
FROM (
  SELECT o."id", o."payment_id", o."authorized_at",
         (o."status" IN ('broadcast', 'confirmed') OR EXISTS (
            SELECT 1 FROM "settlement_legs" l
            WHERE l."source_type" = 'vault_funding' AND l."source_id" = o."id" AND l."status" IN ('broadcast', 'confirmed')
         )) AS "sent"
  FROM "vault_funding_operations" o
  WHERE o."status" <> 'failed'
) s;

UPDATE "vault_funding_operations" o
SET "status" = 'failed', "failure_reason" = 'duplicate_for_payment', "status_version" = o."status_version" + 1, "updated_at" = now()
FROM "vault_funding_ranked" r
WHERE o."id" = r."id" AND r."rank" > 1 AND NOT r."sent";

UPDATE "vault_funding_operations" o
SET "duplicate_before_rule" = true, "updated_at" = now()
FROM "vault_funding_ranked" r
WHERE o."id" = r."id" AND r."rank" > 1 AND r."sent";

CREATE UNIQUE INDEX "vault_funding_operations_payment_live_key" ON "vault_funding_operations"("payment_id")
WHERE "status" <> 'failed' AND NOT "duplicate_before_rule";
