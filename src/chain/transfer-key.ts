/**
 * A transfer's identity, as a string: `chainId:txHash:recipient:ordinal` (lowercased). It survives a
 * reorg that mines the transaction again elsewhere (the log index may change, its place within the
 * transaction does not). Transfers recorded before ordinals are keyed `chainId:txHash:logIndex`.
 */
export function transferKey(t: { chainId: number; txHash: string; to: string; ordinal: number }): string {
  return `${t.chainId}:${t.txHash.toLowerCase()}:${t.to.toLowerCase()}:${t.ordinal}`;
}

export type ParsedTransferKey =
  | { chainId: number; txHash: string; to: string; ordinal: number; logIndex?: undefined }
  | { chainId: number; txHash: string; logIndex: number; to?: undefined; ordinal?: undefined };

export function parseTransferKey(key: string): ParsedTransferKey {
  const parts = key.split(':');
  if (parts.length === 4) return { chainId: Number(parts[0]), txHash: String(parts[1]), to: String(parts[2]), ordinal: Number(parts[3]) };
  return { chainId: Number(parts[0]), txHash: String(parts[1]), logIndex: Number(parts[2]) };
}
