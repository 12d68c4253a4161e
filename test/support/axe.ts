import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * axe-core's WCAG 2.1 A/AA rules on the page as it stands, one line per violation (rule, help and
 * where). Injected through the DevTools protocol, which the pages' script-free CSP does not govern.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  // A string: the test's TypeScript has no DOM types.
  return page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG)} } }).then((r) =>
    r.violations.map((v) => v.id + ': ' + v.help + ' at ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`) as Promise<string[]>;
}
