import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Where the repository (or the image's /app) is: the files the service reads at run time (config/,
 * contracts/, public/, prisma/migrations) sit under it. A platform helper, so the HTTP layer, the
 * configuration and the chain code find their files without reaching into the embedded stack.
 */

let cachedRoot: string | undefined;

/**
 * The nearest folder above this file holding package.json and config/toolchain.json. Walking up works
 * from src/ (tsx) and from dist/src/ (compiled) alike.
 */
export function projectRoot(): string {
  if (cachedRoot) return cachedRoot;
  for (let dir = __dirname; ;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'config', 'toolchain.json'))) {
      cachedRoot = dir;
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no project root (package.json and config/toolchain.json) above ${__dirname}`);
    dir = parent;
  }
}
