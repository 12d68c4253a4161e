-- Whose money an incident holds: the address its funds came from, so a recovery pays that payer back.
-- An incident with a transfer of its own (late, duplicate, excess, payout refund) came from that
-- transfer's sender. One without (underpaid at expiry, funded on a lapsed quote) is recorded now once
-- per payer, for what that payer's funding transfers counted. Rows from before: a transfer-less incident
-- of a Payment funded by one address gets that address; one of a Payment funded by several keeps NULL
-- (a partner can't recover it whole to one of them; an operator names where it goes).
ALTER TABLE "payment_incidents" ADD COLUMN "from_address" TEXT;

UPDATE "payment_incidents" i
SET "from_address" = lower(t."from_address")
FROM "payment_transfers" t
WHERE i."transfer_id" = t."id";

UPDATE "payment_incidents" i
SET "from_address" = s."payer"
FROM (
  SELECT "payment_id", min(lower("from_address")) AS "payer"
  FROM "payment_transfers"
  WHERE "status" = 'confirmed' AND "role" = 'funding'
  GROUP BY "payment_id"
  HAVING count(DISTINCT lower("from_address")) = 1
) s
WHERE i."transfer_id" IS NULL AND i."payment_id" = s."payment_id";
