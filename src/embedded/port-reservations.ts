import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Ports handed out by `freePort` and not yet bound, shared by every process on the machine: a port is
 * free when it is drawn but its server binds it later, and another process drawing in between (a
 * worker's metrics port while `npm start` is still starting) would otherwise get the same number.
 * One file per port, created exclusively; a reservation lapses after RESERVATION_HOLD_MS, by when a server has
 * bound its port or never will.
 */
const DIR = path.join(os.tmpdir(), 'partner-payments-port-reservations');
export const RESERVATION_HOLD_MS = 15 * 60_000;
let pruned = false;

/** Reserves port for this process; false when another process holds a live reservation on it. */
export function reservePort(port: number, now = Date.now()): boolean {
  mkdirSync(DIR, { recursive: true });
  if (!pruned) pruneLapsed(now);
  const file = path.join(DIR, String(port));
  if (create(file)) return true;
  if (!lapsed(file, now)) return false;
  // Two processes taking over the same lapsed reservation in the same instant is the one race left;
  // it needs both to draw the same port of thousands at once.
  rmSync(file, { force: true });
  return create(file);
}

function create(file: string): boolean {
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function lapsed(file: string, now: number): boolean {
  try {
    return now - statSync(file).mtimeMs > RESERVATION_HOLD_MS;
  } catch {
    return true;
  }
}

function pruneLapsed(now: number): void {
  pruned = true;
  for (const name of readdirSync(DIR)) {
    const file = path.join(DIR, name);
    if (lapsed(file, now)) rmSync(file, { force: true });
  }
}
