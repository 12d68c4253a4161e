-- A Payment's recipientDisplay.displayName is always a name (spec: a string). Payments created without
-- one (the recipient had no display profile) get the recipient's payment handle, as new ones do, or
-- its account id when it has no handle.
UPDATE "payments" p
   SET "recipient_display_name" = COALESCE(
         (SELECT h."handle" FROM "payment_handles" h WHERE h."account_id" = p."recipient_account_id"),
         p."recipient_account_id")
 WHERE p."recipient_display_name" IS NULL;

ALTER TABLE "payments" ALTER COLUMN "recipient_display_name" SET NOT NULL;
