import { Prisma } from '../../generated/prisma/client';
import type { PrismaClient } from '../../db/client';
import type { TEnvironments } from '../../config/environments';
import { finalityOf, type FinalityNetwork, type ScannedHead } from './pure/finality';
import type { TFinality } from './finality.schemas';

/** A network without a configured block time: Ethereum's, a cautious estimate until the scanner has measured one. */
export const DEFAULT_BLOCK_TIME_MS = 12_000;

/** What a read of finality needs: the database, and the networks' settings (every environment's; absent: none is shown). */
export interface FinalityDeps {
  prisma: PrismaClient;
  environments?: TEnvironments;
}

/** Whose finality is read: the owners of one kind (a page of a list, or one resource). */
export type FinalityOwners =
  { kind: 'payment'; ids: string[] } | { kind: 'deposit'; ids: string[] } | { kind: 'fund_return'; ids: string[] };

interface Row {
  owner_id: string;
  part: 'transfer' | 'settlement';
  leg: string | null;
  chain_id: number;
  tx_hash: string;
  block_number: bigint | null;
  next_from_block: bigint | null;
  head_block_at: Date | null;
  block_time_ms: number | null;
}

/** The incoming transfers of each kind: a Payment's (not dust or foreign: the sweep's), a deposit's own. The first SELECT names the columns. */
function transfersOf(owners: FinalityOwners): Prisma.Sql {
  switch (owners.kind) {
    case 'payment':
      return Prisma.sql`SELECT payment_id AS owner_id, 'transfer' AS part, NULL AS leg, chain_id, tx_hash, block_number AS ord, log_index AS sub, created_at
        FROM payment_transfers WHERE payment_id = ANY(${owners.ids}::text[]) AND status IN ('pending', 'confirmed', 'dropped')`;
    case 'deposit':
      return Prisma.sql`SELECT id AS owner_id, 'transfer' AS part, NULL AS leg, chain_id, tx_hash, block_number AS ord, log_index AS sub, created_at
        FROM deposits WHERE id = ANY(${owners.ids}::text[])`;
    case 'fund_return':
      return Prisma.sql`SELECT NULL AS owner_id, 'transfer' AS part, NULL AS leg, 0 AS chain_id, '' AS tx_hash, 0::bigint AS ord, 0 AS sub, now() AS created_at WHERE false`;
  }
}

const LEG_SOURCES: Record<FinalityOwners['kind'], string[]> = {
  payment: ['payment'],
  deposit: ['deposit'],
  fund_return: ['refund', 'incident_recovery'],
};

/**
 * The finality of every owner's incoming transfers and live settlement legs, read in one query for
 * them all (a list's page costs one, never one per row): each transaction with where the scanner read
 * it mined and the scanner's head on its network, turned into finality by finalityOf.
 */
export async function finalitiesOf(deps: FinalityDeps, owners: FinalityOwners, now: Date): Promise<Map<string, TFinality>> {
  const result = new Map<string, TFinality>(owners.ids.map((id) => [id, { transfers: [], settlement: [] }]));
  if (owners.ids.length === 0) return result;
  const rows = await deps.prisma.$queryRaw<Row[]>`
    SELECT x.owner_id, x.part, x.leg, x.chain_id, x.tx_hash, i.block_number, c.next_from_block, c.head_block_at, c.block_time_ms
      FROM (
        ${transfersOf(owners)}
        UNION ALL
        SELECT source_id, 'settlement', leg, chain_id, tx_hash, 0::bigint, 0, created_at FROM settlement_legs
         WHERE source_type = ANY(${LEG_SOURCES[owners.kind]}::text[]) AND source_id = ANY(${owners.ids}::text[])
           AND status IN ('broadcast', 'confirmed')
      ) x
      LEFT JOIN chain_inclusions i ON i.chain_id = x.chain_id AND i.tx_hash = x.tx_hash
      LEFT JOIN chain_scan_cursors c ON c.chain_id = x.chain_id
     ORDER BY x.owner_id, x.part DESC, x.ord, x.sub, x.created_at, x.tx_hash`;
  const networks = networksOf(deps.environments);
  for (const r of rows) {
    const network = networks.get(r.chain_id);
    if (!network) continue; // a network no longer configured: nothing to count its depth against
    const finality = finalityOf(
      { chainId: r.chain_id, transactionHash: r.tx_hash, blockNumber: r.block_number === null ? null : BigInt(r.block_number) },
      headOf(r),
      network,
      now,
    );
    const set = result.get(r.owner_id)!;
    if (r.part === 'transfer') set.transfers.push(finality);
    else set.settlement.push({ ...finality, leg: r.leg as TFinality['settlement'][number]['leg'] });
  }
  return result;
}

/** One owner's finality (a single read). */
export async function finalityOfOne(
  deps: FinalityDeps,
  owner: { kind: FinalityOwners['kind']; id: string },
  now: Date,
): Promise<TFinality> {
  return (await finalitiesOf(deps, { kind: owner.kind, ids: [owner.id] }, now)).get(owner.id)!;
}

function headOf(r: Row): ScannedHead {
  return {
    block: r.next_from_block === null ? null : BigInt(r.next_from_block) - 1n,
    at: r.head_block_at,
    blockTimeMs: r.block_time_ms,
  };
}

function networksOf(environments: TEnvironments | undefined): Map<number, FinalityNetwork> {
  const networks = new Map<number, FinalityNetwork>();
  for (const env of Object.values(environments?.environments ?? {})) {
    for (const n of env.networks)
      networks.set(n.chainId, { confirmations: n.confirmations, blockTimeMs: n.blockTimeMs ?? DEFAULT_BLOCK_TIME_MS });
  }
  return networks;
}
