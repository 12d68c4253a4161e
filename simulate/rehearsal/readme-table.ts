import { readFileSync, writeFileSync } from 'node:fs';
import { resultOf, resultTable, withTable } from './result';

/**
 * `npm run rehearsal:readme -- <rehearsal output>`: rewrites the full run's table in docs/testing.md
 * (between its rehearsal-result markers) from the result line of `npm run rehearsal` output. The
 * table is never edited by hand.
 */
const PAGE = 'docs/testing.md';

function main(file: string | undefined): void {
  if (!file) {
    process.stderr.write('usage: npm run rehearsal:readme -- <file holding the output of npm run rehearsal>\n');
    process.exitCode = 2;
    return;
  }
  const result = resultOf(readFileSync(file, 'utf8'));
  writeFileSync(PAGE, withTable(readFileSync(PAGE, 'utf8'), resultTable(result)));
  process.stdout.write(`${PAGE}: the rehearsal table from the run of ${result.date} (${result.ok ? 'passed' : 'failed'})\n`);
}

main(process.argv[2]);
