-- Operator alerts: durable records of what an operator must look at (the books disagree with the
-- chain, a Payment's workflow is gone). Not partner events: no webhook ever carries them.
CREATE TABLE "operator_alerts" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "details" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),
    CONSTRAINT "operator_alerts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operator_alerts_severity_known" CHECK ("severity" IN ('critical', 'warning'))
);
-- One open alert per (kind, subject): the same open difference seen again is not raised again, and two
-- racing passes insert it once.
CREATE UNIQUE INDEX "operator_alerts_open_key" ON "operator_alerts"("kind", "subject") WHERE "resolved_at" IS NULL;
CREATE INDEX "operator_alerts_created_at_id_idx" ON "operator_alerts"("created_at", "id");
