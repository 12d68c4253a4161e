#!/usr/bin/env node
// `npm run api|worker|migrate` run the compiled output; say so plainly when it isn't there.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const needed = ['dist/src/main.js', 'dist/scripts/migrate.js', 'dist/workflow-bundle.js'];
const missing = needed.filter((f) => !fs.existsSync(path.join(root, f)));
if (missing.length > 0) {
  console.error(`not built: ${missing.join(', ')} missing. Run \`npm run build\` first (\`npm start\` runs from source).`);
  process.exit(1);
}
