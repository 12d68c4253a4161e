import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Abi, Hex } from 'viem';
import { projectRoot } from '../platform/project-root';

/**
 * The sandbox token (contracts/TestUSD.sol), compiled with the `solc` npm package. That compiler is a
 * WebAssembly build that takes seconds to load, so the ABI and bytecode are cached on disk, keyed by
 * the source, the compiler version and the settings, and the compiler is only loaded on a cache miss.
 */
export interface ContractArtifact {
  abi: Abi;
  bytecode: Hex;
}

// From the project root, not __dirname: the compiled module lives in dist/src/chain/.
export const TEST_TOKEN_SOURCE = path.join(projectRoot(), 'contracts', 'TestUSD.sol');
const CONTRACT_NAME = 'TestUSD';

// Pinned so the bytecode, and with it the token's CREATE2 address, depends only on the code: no
// metadata hash (comments or file paths would change it) and a fixed EVM version.
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  metadata: { appendCBOR: false },
  outputSelection: { '*': { [CONTRACT_NAME]: ['abi', 'evm.bytecode.object'] } },
} as const;

export interface ArtifactOptions {
  /** Defaults to $PARTNER_PAYMENTS_CACHE, else ~/.cache/partner-payments. */
  cacheDir?: string;
  sourceFile?: string;
}

const memo = new Map<string, ContractArtifact>();

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.PARTNER_PAYMENTS_CACHE || path.join(os.homedir(), '.cache', 'partner-payments');
}

/** Path of the cached artifact for this source; exported so tests and tools can inspect the cache. */
export function artifactCachePath(source: string, cacheDir = defaultCacheDir()): string {
  const key = createHash('sha256')
    .update(JSON.stringify({ source, solc: solcVersion(), settings: SETTINGS }))
    .digest('hex');
  return path.join(cacheDir, 'contracts', `${key}.json`);
}

export function loadTestTokenArtifact(options: ArtifactOptions = {}): ContractArtifact {
  const source = readFileSync(options.sourceFile ?? TEST_TOKEN_SOURCE, 'utf8');
  const file = artifactCachePath(source, options.cacheDir);
  const known = memo.get(file) ?? readCached(file);
  if (known) {
    memo.set(file, known);
    return known;
  }
  const compiled = compile(source);
  writeAtomically(file, JSON.stringify({ contract: CONTRACT_NAME, solc: solcVersion(), ...compiled }));
  memo.set(file, compiled);
  return compiled;
}

function solcVersion(): string {
  // package.json is cheap to read; solc.version() would load the whole compiler.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('solc/package.json') as { version: string }).version;
}

function readCached(file: string): ContractArtifact | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ContractArtifact>;
    if (Array.isArray(parsed.abi) && typeof parsed.bytecode === 'string' && parsed.bytecode.startsWith('0x')) {
      return { abi: parsed.abi, bytecode: parsed.bytecode };
    }
  } catch {
    // Missing or unreadable (e.g. half-written by a crash): recompile and overwrite.
  }
  return undefined;
}

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
}

function compile(source: string): ContractArtifact {
  // Loaded lazily: requiring solc instantiates the WebAssembly compiler, which is the slow part.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require('solc') as { compile(input: string): string };
  const input = { language: 'Solidity', sources: { 'TestUSD.sol': { content: source } }, settings: SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`TestUSD.sol does not compile:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }
  const contract = output.contracts?.['TestUSD.sol']?.[CONTRACT_NAME];
  if (!contract?.evm.bytecode.object) throw new Error('solc returned no bytecode for TestUSD');
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
}

// Concurrent test processes may compile at the same time; rename makes each write all-or-nothing.
function writeAtomically(file: string, content: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, content);
  renameSync(tmp, file);
}
