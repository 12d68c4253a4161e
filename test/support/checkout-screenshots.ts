/**
 * `npm run screenshots`: renders the hosted checkout of a fresh sandbox Payment at phone (390×844) and
 * desktop (1280×900) sizes into docs/screenshots/, on the test harness's stack (its own database,
 * Temporal test server, anvil and API; nothing of `npm start` is needed). Not part of `npm test`.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/platform/project-root';
import { createPayment, newMerchant } from './fixtures';
import { closeBrowser, newContext } from './browser';
import { closeHarness, getHarness } from './harness';

async function main(): Promise<void> {
  const h = await getHarness();
  const merchant = await newMerchant();
  const created = await createPayment(merchant, {
    amount: '12.5',
    description: 'Order 1042: two flat whites and a croissant',
    returnUrl: 'https://shop.example/orders/1042',
    expiresInSeconds: 900,
  });
  if (created.status !== 201) throw new Error(`create Payment: ${created.status} ${created.text}`);
  const url = `${h.baseUrl}/checkout/${created.body.payment.id}`;
  const dir = path.join(projectRoot(), 'docs', 'screenshots');
  mkdirSync(dir, { recursive: true });
  for (const size of ['phone', 'desktop'] as const) {
    const context = await newContext(size);
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForFunction("document.querySelector('img.qr').naturalWidth > 0");
    const file = path.join(dir, `checkout-${size}.png`);
    await page.screenshot({ path: file, fullPage: true });
    console.log(`wrote ${path.relative(projectRoot(), file)}`);
    await context.close();
  }
}

main()
  .then(async () => {
    await closeBrowser();
    await closeHarness();
  })
  .catch(async (err: unknown) => {
    console.error(err);
    await closeBrowser();
    await closeHarness();
    process.exitCode = 1;
  });
