-- App credentials can be rotated and revoked (src/domain/app-credentials.ts). An app holds one or more
-- secrets (hashed): the current one (expires_at NULL) and, after a rotation, the previous ones until
-- their overlap window ends. A revoked app (revoked_at set) authenticates with none of them.
CREATE TABLE "app_secrets" (
    "secret_hash" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),
    CONSTRAINT "app_secrets_pkey" PRIMARY KEY ("app_id", "secret_hash"),
    CONSTRAINT "app_secrets_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "app_secrets" ("secret_hash", "app_id", "created_at") SELECT "secret_hash", "id", "created_at" FROM "apps";
ALTER TABLE "apps" DROP COLUMN "secret_hash";
ALTER TABLE "apps" ADD COLUMN "revoked_at" TIMESTAMPTZ(3);

-- Every API process caches verified credentials; a change to an app or its secrets NOTIFYs on
-- "app_credentials" with the app id (delivered on commit), and each process forgets that app's entries.
CREATE FUNCTION "app_credentials_notify_trigger"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('app_credentials', to_jsonb(OLD) ->> TG_ARGV[0]);
  RETURN NULL;
END;
$$;
CREATE TRIGGER "apps_credentials_notify" AFTER UPDATE OR DELETE ON "apps"
    FOR EACH ROW EXECUTE FUNCTION "app_credentials_notify_trigger"('id');
CREATE TRIGGER "app_secrets_credentials_notify" AFTER UPDATE OR DELETE ON "app_secrets"
    FOR EACH ROW EXECUTE FUNCTION "app_credentials_notify_trigger"('app_id');

-- The operator audit covers credential actions on apps.
ALTER TABLE "operator_actions" DROP CONSTRAINT "operator_actions_action_known";
ALTER TABLE "operator_actions" ADD CONSTRAINT "operator_actions_action_known"
    CHECK ("action" IN ('retry', 'mark-settled', 'fail', 'recover-incident', 'rotate-secret', 'revoke'));
ALTER TABLE "operator_actions" DROP CONSTRAINT "operator_actions_target_known";
ALTER TABLE "operator_actions" ADD CONSTRAINT "operator_actions_target_known" CHECK ("target_type" IN ('payment', 'deposit', 'fund_return', 'app'));
ALTER TABLE "operator_actions" DROP CONSTRAINT "operator_actions_outcome_known";
ALTER TABLE "operator_actions" ADD CONSTRAINT "operator_actions_outcome_known"
    CHECK ("outcome" IN ('signalled', 'created', 'refused', 'failed', 'applied'));
