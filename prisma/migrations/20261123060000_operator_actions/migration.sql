-- The audit of operator actions (src/domain/operator-actions.ts): who did what to which Payment or
-- deposit, when, why, through which channel (console, CLI, admin API), and what came of it. One row
-- per request, refusals included; append-only.
CREATE TABLE "operator_actions" (
    "id" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "reason" TEXT,
    "details" JSONB NOT NULL,
    "outcome" TEXT NOT NULL,
    "outcome_detail" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "operator_actions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operator_actions_channel_known" CHECK ("channel" IN ('console', 'cli', 'admin_api')),
    CONSTRAINT "operator_actions_action_known" CHECK ("action" IN ('retry', 'mark-settled', 'fail', 'recover-incident')),
    CONSTRAINT "operator_actions_target_known" CHECK ("target_type" IN ('payment', 'deposit')),
    CONSTRAINT "operator_actions_outcome_known" CHECK ("outcome" IN ('signalled', 'created', 'refused', 'failed'))
);
CREATE INDEX "operator_actions_target_type_target_id_created_at_idx" ON "operator_actions"("target_type", "target_id", "created_at");
CREATE INDEX "operator_actions_created_at_id_idx" ON "operator_actions"("created_at", "id");
-- The console's list of held Payments (operational_state retrying or requires_intervention): few rows
-- of many, so a partial index (SQL only; deposits have deposits_status_settled_at_idx).
CREATE INDEX "payments_operational_hold_idx" ON "payments"("operational_updated_at") WHERE "operational_state" <> 'normal';
