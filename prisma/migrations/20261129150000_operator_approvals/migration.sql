-- Two-person approvals of operator actions (prisma/schema/operator-approvals.prisma): one operator
-- asks, another decides. The signer pays a fund return anywhere but its payer only under an approved
-- one whose decider is not its requester (src/domain/returns/pure/return-destination-check.ts).
CREATE TABLE "operator_approvals" (
    "id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "params" JSONB NOT NULL,
    "reason" TEXT NOT NULL,
    "requested_by" TEXT NOT NULL,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "status" TEXT NOT NULL,
    "decided_by" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "result_id" TEXT,
    CONSTRAINT "operator_approvals_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operator_approvals_status_known" CHECK ("status" IN ('pending', 'approved', 'rejected', 'expired'))
);
CREATE INDEX "operator_approvals_status_expires_at_idx" ON "operator_approvals"("status", "expires_at");
-- The approval a fund return to an address other than its payer was made under (NULL: none).
ALTER TABLE "fund_returns" ADD COLUMN "approval_id" TEXT;
ALTER TABLE "fund_returns" ADD CONSTRAINT "fund_returns_approval_id_fkey" FOREIGN KEY ("approval_id") REFERENCES "operator_approvals"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
