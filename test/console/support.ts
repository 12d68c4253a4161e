import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { listenAdminApi } from '../support/bounded-api';
import { newContext } from '../support/browser';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import type { TestOperator } from '../support/operators';

export const UI = 'http://temporal-ui.test:8233';

/** The console's API and a desktop browser on it: what a describe of console pages opens before its tests. */
export interface ConsoleInBrowser {
  baseUrl: string;
  /** A fresh browser context (its own cookies), at the desktop size. */
  context: BrowserContext;
  page: Page;
  /** Closes the browser context, then the API. */
  close(): Promise<void>;
}

/** Starts the console's API and opens a desktop browser page for it; asserts the console answers. */
export async function newConsole(): Promise<ConsoleInBrowser> {
  const api = await startConsoleApi();
  let context: BrowserContext | undefined;
  const close = async () => {
    await context?.close();
    await api.close();
  };
  try {
    assert.equal((await fetch(`${api.baseUrl}/console/login`)).status, 200, 'the console is on');
    context = await newContext('desktop');
    const page = await context.newPage();
    return { baseUrl: api.baseUrl, context, page, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The admin plane (admin API, console) on a listener of its own, the operator engine given, on the
 * shared harness; its mailer is the harness's SMTP server (h.mailbox), as in production.
 */
export async function startConsoleApi() {
  const h = await getHarness();
  return listenAdminApi(
    await apiDepsOnHarness({
      config: consoleConfig(h.config),
      engine: h.engine,
      chains: h.chain.chains,
      returns: h.engine,
      operator: { engine: h.engine, temporalUiUrl: UI },
    }),
  );
}

/**
 * The harness's config with room for the suite's operator sign-ins: every test signs in from
 * 127.0.0.1, past the production quota of sign-in attempts per address (the quota is the throttle's
 * own test's, not these).
 */
export function consoleConfig<C extends { ipRateLimits: { operatorSignIn: object } }>(config: C): C {
  return {
    ...config,
    ipRateLimits: { ...config.ipRateLimits, operatorSignIn: { ...config.ipRateLimits.operatorSignIn, points: 100_000 } },
  };
}

/**
 * Step one of the sign-in, in the browser: the operator's email, submitted from the keyboard. Answers
 * the code the real mail path delivered to the harness's SMTP server; the page is then the code form.
 */
export async function requestSignInCode(page: Page, baseUrl: string, email: string): Promise<string> {
  const h = await getHarness();
  await page.context().clearCookies();
  await page.goto(`${baseUrl}/console`);
  assert.equal(new URL(page.url()).pathname, '/console/login');
  const before = h.mailbox.received.length;
  await page.getByLabel('Your operator email').fill(email);
  // The keyboard submits the form (Enter in a field), as for any operator without a mouse.
  await page.getByLabel('Your operator email').press('Enter');
  await page.getByLabel('Emailed code').waitFor();
  const mail = await h.mailbox.next(email, before);
  return h.mailbox.codeOf(mail);
}

/**
 * Signs `operator` in, in the browser: their email, then the emailed code and their authenticator's
 * code (`totp`, their current one unless given). A TOTP step is taken once per operator: sign each
 * operator in once, or pass `await operator.totp(1)` for a second sign-in within 30 s.
 */
export async function signIn(page: Page, baseUrl: string, operator: TestOperator, opts: { totp?: string } = {}) {
  const code = await requestSignInCode(page, baseUrl, operator.email);
  await page.getByLabel('Emailed code').fill(code);
  await page.getByLabel('Authenticator code').fill(opts.totp ?? (await operator.totp()));
  await page.getByLabel('Authenticator code').press('Enter');
  await page.waitForLoadState('domcontentloaded');
}

/** A 6-digit code that is none of the operator's authenticator codes accepted now (this step or either neighbour). */
export async function wrongTotp(operator: TestOperator): Promise<string> {
  const accepted = new Set(await Promise.all([-1, 0, 1, 2].map((steps) => operator.totp(steps))));
  for (let n = 0; ; n += 1) {
    const code = String(n).padStart(6, '0');
    if (!accepted.has(code)) return code;
  }
}

/** A basic accessibility check, in the page (a string: the test's TypeScript has no DOM types): its problems. */
export function pageProblems(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const problems = [];
    if (!document.documentElement.lang) problems.push('no lang');
    if (document.querySelectorAll('h1').length !== 1) problems.push('not one h1');
    if (!document.querySelector('main')) problems.push('no main');
    for (const field of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
      const labelled = field.labels?.length || field.getAttribute('aria-label') || field.getAttribute('aria-labelledby');
      if (!labelled) problems.push('unlabelled ' + field.name);
    }
    for (const form of document.querySelectorAll('form')) {
      if (!form.querySelector('button[type=submit], input[type=submit]')) problems.push('form ' + form.action + ' cannot be submitted from the keyboard');
    }
    return problems;
  })()`) as Promise<string[]>;
}
