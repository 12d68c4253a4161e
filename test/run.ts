import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { processFiles, runsLast, stopsTheWorker, TEST_ROOT } from './support/test-files';
import { assignShards, orderSeed, orderSeedLine, shardCount, shuffleShards, type Shard } from './support/shards';
import { loadConfig } from '../src/config';
import { startEmbeddedPostgres } from '../src/embedded/postgres';

/**
 * `npm test`: the suite in shards, each a node:test process of its own (test/index.ts) with its own
 * harness: database, time-skipping server, chains and worker. Most of a test's time is waiting on
 * those, so shards overlap it. TEST_SHARDS sets how many; docs/testing.md says more.
 */
const TIMINGS_FILE = path.join(TEST_ROOT, 'timings.json');
const SUMMARY_KEYS = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'] as const;

interface ShardResult {
  code: number;
  summary: Record<string, number>;
  /** Files whose suite failed, a test or a hook (the chain baseline check is an after hook: no test counts it). */
  failedFiles: Set<string>;
  timings: Record<string, number>;
}

function readTimings(): Record<string, number> {
  return existsSync(TIMINGS_FILE) ? (JSON.parse(readFileSync(TIMINGS_FILE, 'utf8')) as Record<string, number>) : {};
}

/** Each file's time (ms) from the timing reporter's lines; a last line cut short by the forced exit is skipped. */
function readFileTimings(file: string): Record<string, number> {
  const byFile: Record<string, number> = {};
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [];
  for (const line of lines) {
    try {
      const { file: testFile, ms } = JSON.parse(line) as { file: string; ms: number };
      byFile[testFile] = (byFile[testFile] ?? 0) + ms;
    } catch {
      continue;
    }
  }
  return byFile;
}

function runShard(shard: Shard, index: number, total: number, children: Set<ChildProcess>, outDir: string): Promise<ShardResult> {
  const label = total > 1 ? `[${index + 1}/${total}] ` : '';
  const timingsOut = path.join(outDir, `timings-${index}.jsonl`);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      '--test-timeout=4500000',
      '--test-force-exit',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${path.join(TEST_ROOT, 'support', 'file-timing-reporter.mjs')}`,
      `--test-reporter-destination=${timingsOut}`,
      path.join(TEST_ROOT, 'index.ts'),
    ],
    { env: { ...process.env, TEST_FILES: shard.files.join('\n') }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  const summary: Record<string, number> = {};
  const failedFiles = new Set<string>();
  const relay = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) =>
    createInterface({ input: stream }).on('line', (line) => {
      const total = /^ℹ (\w+) ([\d.]+)$/.exec(line);
      if (total) summary[total[1]!] = Number(total[2]);
      const failedFile = /^✖ (\S+\.test\.ts) \(/.exec(line);
      if (failedFile) failedFiles.add(failedFile[1]!);
      out.write(`${label}${line}\n`);
    });
  relay(child.stdout!, process.stdout);
  relay(child.stderr!, process.stderr);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code: code ?? (signal ? 1 : 0), summary, failedFiles, timings: readFileTimings(timingsOut) });
    });
  });
}

function printSummary(results: ShardResult[], wallMs: number, seed: number): void {
  const sum = (key: string) => results.reduce((n, r) => n + (r.summary[key] ?? 0), 0);
  console.log(`\n# ${results.length} shard(s); ${orderSeedLine(seed)}`);
  for (const key of SUMMARY_KEYS) console.log(`ℹ ${key} ${sum(key)}`);
  console.log(`ℹ duration_ms ${Math.round(wallMs)}`);
  const failedFiles = results.flatMap((r) => [...r.failedFiles]).sort();
  if (failedFiles.length > 0) console.log(`# files that failed: ${failedFiles.join(', ')}`);
  const unexplained = results.filter((r) => r.code !== 0 && !(r.summary.fail ?? 0) && r.failedFiles.size === 0);
  for (const r of unexplained) console.log(`# a shard exited ${r.code} without a failed test: read its output above`);
}

/** The measured seconds per file, relative to test/, for the next runs' balance (TEST_WRITE_TIMINGS=1). */
function writeTimings(results: ShardResult[]): void {
  const kept = Object.entries(readTimings()).filter(([file]) => existsSync(path.join(TEST_ROOT, file)));
  const measured = results.flatMap((r) => Object.entries(r.timings).map(([file, ms]) => [file, Math.round(ms / 100) / 10] as const));
  const merged = Object.fromEntries([...kept, ...measured].sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(TIMINGS_FILE, `${JSON.stringify(merged, null, 2)}\n`);
  console.log(`# wrote ${path.relative(process.cwd(), TIMINGS_FILE)}`);
}

async function main(): Promise<void> {
  const files = processFiles();
  // Balanced by the timings, then each shard's files in an order drawn from the seed: a test that
  // needs another file before it fails under some seed, and the printed seed replays that order.
  const seed = orderSeed(process.env);
  console.log(orderSeedLine(seed));
  const balanced = assignShards(files, shardCount(process.env, files.length), readTimings(), TEST_ROOT, stopsTheWorker);
  const shards = shuffleShards(balanced, seed, runsLast);
  // The project's cluster runs for the whole run: a shard that started it would stop it under the others.
  const config = loadConfig(process.env);
  const postgres = config.database.url ? undefined : await startEmbeddedPostgres({ port: config.database.embeddedPort });
  const children = new Set<ChildProcess>();
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => {
      for (const child of children) child.kill(signal);
      postgres?.kill();
      process.exit(130);
    });
  const outDir = mkdtempSync(path.join(os.tmpdir(), 'pp-test-run-'));
  const started = performance.now();
  const results = await Promise.all(shards.map((shard, i) => runShard(shard, i, shards.length, children, outDir)));
  await postgres?.stop();
  printSummary(results, performance.now() - started, seed);
  if (process.env.TEST_WRITE_TIMINGS === '1') writeTimings(results);
  rmSync(outDir, { recursive: true, force: true });
  process.exitCode = results.find((r) => r.code !== 0)?.code ?? 0;
}

void main();
