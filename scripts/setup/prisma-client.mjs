// Step: prisma client. `prisma generate` offline when prisma/schema/**, prisma.config.ts or the Prisma
// version changed (stamp: <generator output>/.setup-stamp).

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { exists, logFile, readIf, repoLock, ROOT, runOrFail, SetupError, withLock } from './util.mjs';

function listFilesSorted(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((x, y) => (x.name < y.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  if (exists(dir)) walk(dir);
  return out;
}

export async function prismaClient() {
  const schemaDir = path.join(ROOT, 'prisma', 'schema');
  const files = listFilesSorted(schemaDir);
  const schemaText = files
    .filter((f) => f.endsWith('.prisma'))
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n');
  if (!/^\s*generator\s+\w+\s*\{/m.test(schemaText)) {
    return { skipped: true, note: 'no generator block in prisma/schema/*.prisma yet' };
  }
  const prismaPkg = readIf(path.join(ROOT, 'node_modules', 'prisma', 'package.json'));
  const prismaBin = path.join(ROOT, 'node_modules', '.bin', 'prisma');
  if (!prismaPkg || !exists(prismaBin)) {
    throw new SetupError('the prisma CLI is not installed in node_modules', ['add `prisma` to devDependencies and run `npm install`']);
  }
  const hash = createHash('sha256');
  hash.update(`prisma ${JSON.parse(prismaPkg).version}\n`);
  for (const f of files) hash.update(`${path.relative(ROOT, f)}\n`).update(fs.readFileSync(f));
  hash.update(readIf(path.join(ROOT, 'prisma.config.ts')) || '');
  const want = hash.digest('hex');

  // Output folder from the generator block (relative to the schema folder); default src/generated/prisma.
  const outMatch = /^\s*output\s*=\s*"([^"]+)"/m.exec(schemaText);
  const outDir = outMatch ? path.resolve(schemaDir, outMatch[1]) : path.join(ROOT, 'src', 'generated', 'prisma');
  const stamp = path.join(outDir, '.setup-stamp');
  if (readIf(stamp) === want) return { cached: true };

  return withLock(
    repoLock('prisma'),
    () => readIf(stamp) === want,
    async () => {
      const log = logFile('prisma');
      // The prisma-client generator needs no engine; these keep the CLI from trying to download one.
      await runOrFail(
        'prisma generate',
        prismaBin,
        ['generate'],
        {
          log,
          env: {
            PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING: '1',
            PRISMA_SCHEMA_ENGINE_BINARY:
              process.env.PRISMA_SCHEMA_ENGINE_BINARY || (exists('/bin/false') ? '/bin/false' : process.execPath),
            PRISMA_HIDE_UPDATE_MESSAGE: '1',
            CHECKPOINT_DISABLE: '1',
          },
        },
        ['fix the schema error shown above (prisma/schema/*.prisma), then run this again'],
      );
      fs.mkdirSync(outDir, { recursive: true });
      fs.writeFileSync(stamp, want);
      return {};
    },
  );
}
