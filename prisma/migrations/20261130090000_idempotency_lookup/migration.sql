-- Idempotency keys a partner can look up (GET /v2/idempotency-keys/{key}): a released key keeps its
-- row (state 'released') instead of being deleted, each claim records the SHA-256 of its raw body
-- (NULL on rows from before), and a key kept in a principal's namespace (the client API's accounts,
-- public creation) is marked so the app's own lookup never shows it.
ALTER TABLE "idempotency_records" ADD COLUMN "body_sha256" TEXT,
ADD COLUMN "namespaced" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "released_at" TIMESTAMPTZ(3);

UPDATE "idempotency_records" SET "namespaced" = true
 WHERE "path" LIKE '/v2/client/%' OR "key" LIKE 'public' || chr(9) || ':%';

ALTER TABLE "idempotency_records" ADD CONSTRAINT "idempotency_records_state_known"
    CHECK ("state" IN ('in_progress', 'completed', 'released'));
