-- The last pass of each scheduled reconciliation (src/domain/reconciliation-runs.ts), one row per
-- reconciliation, upserted by its activities: the pass in progress and the last finished one.
CREATE TABLE "reconciliation_runs" (
    "name" TEXT NOT NULL,
    "current_run_id" TEXT,
    "current_started_at" TIMESTAMPTZ(3),
    "current_findings" JSONB NOT NULL DEFAULT '[]',
    "current_last_item" TEXT,
    "workflow_id" TEXT,
    "run_id" TEXT,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "outcome" TEXT,
    "discrepancies" INTEGER,
    "counts" JSONB,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "reconciliation_runs_pkey" PRIMARY KEY ("name"),
    CONSTRAINT "reconciliation_runs_outcome_known" CHECK ("outcome" IN ('clean', 'discrepancies'))
);
