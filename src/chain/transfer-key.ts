/** A transfer's identity on chain: `chainId:txHash:logIndex` (the hash lowercased). */
export function transferKey(chainId: number, txHash: string, logIndex: number): string {
  return `${chainId}:${txHash.toLowerCase()}:${logIndex}`;
}

export function parseTransferKey(key: string): { chainId: number; txHash: string; logIndex: number } {
  const [chainId, txHash, logIndex] = key.split(':');
  return { chainId: Number(chainId), txHash: String(txHash), logIndex: Number(logIndex) };
}
