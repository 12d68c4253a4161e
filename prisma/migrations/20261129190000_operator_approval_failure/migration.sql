-- An approved request whose action was then refused (its item moved on meanwhile) is `failed`, with
-- the refusal kept, instead of standing approved with nothing done.
ALTER TABLE "operator_approvals" ADD COLUMN "failure" TEXT;
ALTER TABLE "operator_approvals" DROP CONSTRAINT "operator_approvals_status_known";
ALTER TABLE "operator_approvals" ADD CONSTRAINT "operator_approvals_status_known" CHECK ("status" IN ('pending', 'approved', 'rejected', 'expired', 'failed'));
