-- A fee replacement at the same nonce: the transaction it replaces becomes 'superseded' (it may still
-- be the one mined; src/domain/settlement/settlement-legs.ts, followLegFamily).
ALTER TABLE "settlement_legs" DROP CONSTRAINT "settlement_legs_status_known";
ALTER TABLE "settlement_legs" ADD CONSTRAINT "settlement_legs_status_known" CHECK ("status" IN ('broadcast', 'confirmed', 'reverted', 'replaced', 'superseded'));
