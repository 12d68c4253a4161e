import { catalogNetwork } from './network-catalog';
import {
  createPublicClient,
  createWalletClient,
  encodeDeployData,
  erc20Abi,
  getCreate2Address,
  keccak256,
  parseAbi,
  parseEther,
  stringToHex,
  type Address,
  type Hash,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { rpcTransport } from './transport';
import { loadTestTokenArtifact } from './token-artifact';

/**
 * The sandbox's test token on a local dev chain (anvil). It is deployed through the CREATE2 factory
 * that anvil pre-installs, so its address depends only on the contract and the minter, never on how
 * many transactions the dev account sent before: the same on every fresh chain, and nameable in
 * static configuration.
 */

/** anvil's own chain id: the local dev chain's unless started with another (a production config never names it). */
export const ANVIL_CHAIN_ID = 31337;
/** anvil's well-known dev account 0 (public test mnemonic; anvil unlocks it, so no key is held here). */
export const SANDBOX_DEPLOYER: Address = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** The deterministic-deployment proxy (Arachnid's), present on anvil by default and on most chains. */
export const CREATE2_FACTORY: Address = '0x4e59b44847b379578588920ca78fbf26c0b4956c';
export const SANDBOX_TOKEN_SALT = keccak256(stringToHex('partner-payments/TestUSD/v1'));
/** Where TestUSD lives on every sandbox chain. Changing TestUSD.sol changes it: update it (and the config). */
export const SANDBOX_TOKEN_ADDRESS: Address = '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5';
export const SANDBOX_TOKEN_DECIMALS = 6;

const MINT_ABI = parseAbi(['function mint(address to, uint256 value)']);

interface Clients {
  publicClient: PublicClient;
  wallet: WalletClient;
}

function clients(rpcUrl: string): Clients {
  // A short polling interval: a local node mines at once, and viem's default would wait 4 s a receipt.
  const transport = rpcTransport(rpcUrl);
  return {
    publicClient: createPublicClient({ transport, pollingInterval: 50, cacheTime: 0 }),
    wallet: createWalletClient({ transport, account: SANDBOX_DEPLOYER, pollingInterval: 50 }),
  };
}

/** The token's init code and CREATE2 address, as computed from the compiled TestUSD.sol. */
export function sandboxTokenDeployment(): { initCode: `0x${string}`; address: Address } {
  const { abi, bytecode } = loadTestTokenArtifact();
  const initCode = encodeDeployData({ abi, bytecode, args: [SANDBOX_DEPLOYER] });
  return { initCode, address: getCreate2Address({ from: CREATE2_FACTORY, salt: SANDBOX_TOKEN_SALT, bytecode: initCode }) };
}

/** Deploys TestUSD unless it is already there (a persisted chain, another process). Idempotent. */
export async function ensureSandboxToken(opts: { rpcUrl: string }): Promise<{ tokenAddress: Address; deployer: Address }> {
  const { initCode, address } = sandboxTokenDeployment();
  if (address !== SANDBOX_TOKEN_ADDRESS) {
    throw new Error(`TestUSD.sol changed: its sandbox address is now ${address}; update SANDBOX_TOKEN_ADDRESS and the config`);
  }
  const { publicClient, wallet } = clients(opts.rpcUrl);
  if (!(await hasCode(publicClient, address))) {
    if (!(await hasCode(publicClient, CREATE2_FACTORY))) {
      throw new Error(`no CREATE2 factory at ${CREATE2_FACTORY} (was anvil started with --no-create2?)`);
    }
    // The factory takes salt ++ init code. A concurrent deployer's duplicate reverts; the code check decides.
    const hash = await wallet.sendTransaction({
      account: SANDBOX_DEPLOYER,
      chain: null,
      to: CREATE2_FACTORY,
      data: `${SANDBOX_TOKEN_SALT}${initCode.slice(2)}`,
    });
    await publicClient.waitForTransactionReceipt({ hash });
    if (!(await hasCode(publicClient, address))) throw new Error(`TestUSD deployment ${hash} left no code at ${address}`);
  }
  return { tokenAddress: address, deployer: SANDBOX_DEPLOYER };
}

/** Mints test tokens (atomic units) as the deployer; resolves once mined. */
export async function mintTo(opts: { rpcUrl: string; to: Address; amountAtomic: bigint; token?: Address }): Promise<Hash> {
  const { publicClient, wallet } = clients(opts.rpcUrl);
  const hash = await wallet.writeContract({
    account: SANDBOX_DEPLOYER,
    chain: null,
    address: opts.token ?? SANDBOX_TOKEN_ADDRESS,
    abi: MINT_ABI,
    functionName: 'mint',
    args: [opts.to, opts.amountAtomic],
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`mint of ${opts.amountAtomic} to ${opts.to} reverted (${hash})`);
  return hash;
}

/**
 * Mints test tokens to the deployer and transfers them on to `to`, both sent by the deployer: their
 * nonces order them even when they wait in the mempool together (mining paused), so the transfer can
 * never run before its mint. Answers once both are broadcast, without waiting for a block.
 */
export async function sendTestTokens(opts: {
  rpcUrl: string;
  to: Address;
  amountAtomic: bigint;
  token?: Address;
}): Promise<{ from: Address; mintTxHash: Hash; txHash: Hash }> {
  const { wallet } = clients(opts.rpcUrl);
  const token = opts.token ?? SANDBOX_TOKEN_ADDRESS;
  const mintTxHash = await wallet.writeContract({
    account: SANDBOX_DEPLOYER,
    chain: null,
    address: token,
    abi: MINT_ABI,
    functionName: 'mint',
    args: [SANDBOX_DEPLOYER, opts.amountAtomic],
  });
  // A fixed gas limit: an estimate would run before the mint is mined and fail on the empty balance.
  const txHash = await wallet.writeContract({
    account: SANDBOX_DEPLOYER,
    chain: null,
    address: token,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [opts.to, opts.amountAtomic],
    gas: 100_000n,
  });
  return { from: SANDBOX_DEPLOYER, mintTxHash, txHash };
}

/** Gives a wallet test tokens and gas money, so it can send transfers itself. */
export async function fundTestWallet(opts: {
  rpcUrl: string;
  address: Address;
  tokenAtomic?: bigint;
  nativeWei?: bigint;
  token?: Address;
}): Promise<void> {
  const { publicClient, wallet } = clients(opts.rpcUrl);
  const nativeWei = opts.nativeWei ?? parseEther('1');
  if (nativeWei > 0n) {
    const hash = await wallet.sendTransaction({ account: SANDBOX_DEPLOYER, chain: null, to: opts.address, value: nativeWei });
    await publicClient.waitForTransactionReceipt({ hash });
  }
  if (opts.tokenAtomic && opts.tokenAtomic > 0n) {
    await mintTo({ rpcUrl: opts.rpcUrl, to: opts.address, amountAtomic: opts.tokenAtomic, token: opts.token });
  }
}

async function hasCode(client: PublicClient, address: Address): Promise<boolean> {
  const code = await client.getCode({ address });
  return code !== undefined && code !== '0x';
}

/**
 * The real stablecoin addresses of the chains a two-chain test deployment runs (Circle's USDC and
 * EURC, 6 decimals both), for the test token's code placed there (placeTestTokenAt).
 */
/** A catalog network's contract of an asset (Circle's address), where the sandbox places its test token. */
export function catalogTokenAddress(code: string, symbol: string): Address {
  const asset = catalogNetwork(code)?.assets.find((a) => a.symbol === symbol);
  if (!asset) throw new Error(`the catalog has no ${symbol} on ${code}`);
  return asset.tokenAddress;
}

/**
 * Places the test token's runtime code at the given addresses of a local dev chain (anvil_setCode),
 * so a dev chain with a real chain id answers at a real token's address as that token would, and the
 * service runs against the production addresses. TestUSD's constructor writes no storage: name,
 * symbol and decimals are constants and the minter an immutable, all in the runtime code, so a fresh
 * placement (total supply 0, no balances) is the deployed state. The runtime code is read from the
 * sandbox deployment on the same chain (deployed first when missing). Idempotent.
 */
export async function placeTestTokenAt(opts: { rpcUrl: string; addresses: Address[] }): Promise<void> {
  await ensureSandboxToken({ rpcUrl: opts.rpcUrl });
  const { publicClient } = clients(opts.rpcUrl);
  const code = await publicClient.getCode({ address: SANDBOX_TOKEN_ADDRESS });
  if (!code || code === '0x') throw new Error(`no sandbox token code at ${SANDBOX_TOKEN_ADDRESS}`);
  for (const address of opts.addresses) {
    if ((await publicClient.getCode({ address })) === code) continue;
    await publicClient.request({ method: 'anvil_setCode' as never, params: [address, code] as never });
  }
}
