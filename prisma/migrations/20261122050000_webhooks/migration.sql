-- Webhooks: dispatch marker and order on the event outbox; endpoints, deliveries and attempts.
ALTER TABLE "events" ADD COLUMN "sequence" BIGSERIAL NOT NULL,
ADD COLUMN "dispatched_at" TIMESTAMPTZ(3);
CREATE UNIQUE INDEX "events_sequence_key" ON "events"("sequence");
-- The dispatcher's queue: only undispatched rows are indexed.
CREATE INDEX "events_undispatched_sequence_idx" ON "events"("sequence") WHERE "dispatched_at" IS NULL;

CREATE TABLE "webhook_endpoints" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "description" TEXT,
    "events" TEXT[],
    "status" TEXT NOT NULL,
    "secret_ciphertext" TEXT NOT NULL,
    "secret_version" INTEGER NOT NULL DEFAULT 1,
    "secret_rotated_at" TIMESTAMPTZ(3),
    "archived_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_endpoints_app_id_created_at_idx" ON "webhook_endpoints"("app_id", "created_at");
-- A URL is unique among the app's active (non-archived) endpoints.
CREATE UNIQUE INDEX "webhook_endpoints_app_id_url_active_key" ON "webhook_endpoints"("app_id", "url") WHERE "status" <> 'archived';

CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "round" INTEGER NOT NULL DEFAULT 1,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3),
    "queued_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "webhook_deliveries_event_id_endpoint_id_key" ON "webhook_deliveries"("event_id", "endpoint_id");
CREATE INDEX "webhook_deliveries_app_id_created_at_idx" ON "webhook_deliveries"("app_id", "created_at");
CREATE INDEX "webhook_deliveries_endpoint_id_created_at_idx" ON "webhook_deliveries"("endpoint_id", "created_at");
-- Deliveries whose workflow still has to be started (new ones and operator redeliveries).
CREATE INDEX "webhook_deliveries_queued_idx" ON "webhook_deliveries"("queued_at", "id") WHERE "queued_at" IS NOT NULL;
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "webhook_attempts" (
    "delivery_id" TEXT NOT NULL,
    "round" INTEGER NOT NULL,
    "attempt" INTEGER NOT NULL,
    "state" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "claimed_at" TIMESTAMPTZ(3) NOT NULL,
    "response_status" INTEGER,
    "response_body" TEXT,
    "latency_ms" INTEGER,
    "error" TEXT,
    "outcome" TEXT,
    "next_delay_ms" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("delivery_id", "round", "attempt")
);
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
