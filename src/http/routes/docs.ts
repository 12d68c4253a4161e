import type Router from '@koa/router';
import type { ApiState } from '../context';
import { html, renderHtml, type Html } from '../html';
import { OPENAPI_PATH, partnersOpenApi, type OpenApiOptions } from '../openapi/document';

export const DOCS_PATH = '/docs';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
}

const AUTH_LABELS: Record<string, string> = {
  appCredentials: 'app credentials (Basic)',
  clientToken: 'client token (Bearer)',
  paymentSecret: 'X-Svc-Payment-Secret',
  providerSignature: 'provider signature',
};

function authOf(op: Operation): string {
  const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
  return schemes.length === 0 ? 'none' : schemes.map((s) => AUTH_LABELS[s] ?? s).join(' + ');
}

/**
 * GET /docs (the config's links.docs): the API reference read from the OpenAPI document, so it lists
 * exactly the operations the service serves. No script, no styles: a page any browser or reader shows.
 */
export function registerDocsRoutes(router: Router<ApiState>, options: OpenApiOptions): void {
  const doc = partnersOpenApi(options);
  const byTag = new Map<string, Html[]>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = (item as Record<string, Operation | undefined>)[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? 'Other';
      const row = html`<tr><td><code>${method.toUpperCase()}</code></td><td><code>${path}</code></td><td>${op.summary ?? ''}</td><td>${authOf(op)}</td></tr>`;
      byTag.set(tag, [...(byTag.get(tag) ?? []), row]);
    }
  }
  const sections = [...byTag].map(
    ([tag, rows]) =>
      html`<section><h2>${tag}</h2><table><thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">What it does</th><th scope="col">Authentication</th></tr></thead><tbody>${rows}</tbody></table></section>`,
  );
  const body = `<!doctype html>${renderHtml(html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${doc.info.title} reference</title></head>
<body><main><h1>${doc.info.title} ${doc.info.version}</h1>
<p>Every operation below is described with its request and response schemas, errors and examples in the
<a href="${OPENAPI_PATH}">OpenAPI 3.1 document</a>; generate a client from it.</p>
${sections}</main></body></html>`)}`;

  router.get(DOCS_PATH, (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = body;
  });
}
