import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { listenApi } from '../support/bounded-api';
import { newContext } from '../support/browser';
import { apiDepsOnHarness, getHarness } from '../support/harness';

export const TOKEN = 'console-test-admin-token-0123456789abcdef';
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

/** The API with the console on (ADMIN_API_TOKEN set, the operator engine given), on the shared harness. */
async function startConsoleApi() {
  const h = await getHarness();
  return listenApi(
    await apiDepsOnHarness({
      config: { ...h.config, admin: { apiToken: TOKEN } },
      engine: h.engine,
      chains: h.chain.chains,
      returns: h.engine,
      operator: { engine: h.engine, temporalUiUrl: UI },
    }),
  );
}

export async function signIn(page: Page, baseUrl: string, who: string, token = TOKEN) {
  await page.context().clearCookies();
  await page.goto(`${baseUrl}/console`);
  assert.equal(new URL(page.url()).pathname, '/console/login');
  await page.getByLabel('Your name or email').fill(who);
  await page.getByLabel('Admin token').fill(token);
  // The keyboard submits the form (Enter in a field), as for any operator without a mouse.
  await page.getByLabel('Admin token').press('Enter');
  await page.waitForLoadState('domcontentloaded');
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
