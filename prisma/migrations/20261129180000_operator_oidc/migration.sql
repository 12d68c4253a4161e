-- Console sign-in through the company's OpenID Connect provider: the identity (issuer, subject) an
-- operator is bound to at their first sign-in (src/domain/operators/operator-oidc.ts).
ALTER TABLE "operators" ADD COLUMN "oidc_issuer" TEXT,
ADD COLUMN "oidc_subject" TEXT;

CREATE UNIQUE INDEX "operators_oidc_issuer_oidc_subject_key" ON "operators"("oidc_issuer", "oidc_subject");
