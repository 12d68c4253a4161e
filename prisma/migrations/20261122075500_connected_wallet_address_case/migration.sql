-- Connected wallet addresses are stored EIP-55 checksummed from now on; rows written before stay
-- lowercase. A wallet is the same wallet in any spelling, so uniqueness per account and chain ignores
-- case: an expression index, which Prisma's schema language can't express.
DROP INDEX "connected_wallets_account_id_chain_id_address_key";
CREATE UNIQUE INDEX "connected_wallets_account_id_chain_id_lower_address_key" ON "connected_wallets"("account_id", "chain_id", lower("address"));
