-- Operators release held refunds and incident recoveries too: their actions are audited with target_type 'fund_return'.
ALTER TABLE "operator_actions" DROP CONSTRAINT "operator_actions_target_known";
ALTER TABLE "operator_actions" ADD CONSTRAINT "operator_actions_target_known" CHECK ("target_type" IN ('payment', 'deposit', 'fund_return'));
