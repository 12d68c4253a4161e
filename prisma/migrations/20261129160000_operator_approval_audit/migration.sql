-- Two-person approvals in the one audit: a money-moving request is 'requested' until another operator
-- approves or rejects it (target: the approval).
ALTER TABLE "operator_actions" DROP CONSTRAINT "operator_actions_action_known";
ALTER TABLE "operator_actions" ADD CONSTRAINT "operator_actions_action_known"
    CHECK ("action" IN ('retry', 'mark-settled', 'fail', 'recover-incident', 'rotate-secret', 'revoke',
        'create-webhook-endpoint', 'update-webhook-endpoint', 'disable-webhook-endpoint', 'enable-webhook-endpoint',
        'archive-webhook-endpoint', 'rotate-webhook-secret', 'redeliver-webhook', 'recover-webhook-endpoint',
        'invite-dashboard-user', 'remove-dashboard-user', 'approve', 'reject'));
ALTER TABLE "operator_actions" DROP CONSTRAINT "operator_actions_target_known";
ALTER TABLE "operator_actions" ADD CONSTRAINT "operator_actions_target_known"
    CHECK ("target_type" IN ('payment', 'deposit', 'fund_return', 'app', 'approval'));
ALTER TABLE "operator_actions" DROP CONSTRAINT "operator_actions_outcome_known";
ALTER TABLE "operator_actions" ADD CONSTRAINT "operator_actions_outcome_known"
    CHECK ("outcome" IN ('signalled', 'created', 'applied', 'requested', 'refused', 'failed'));
