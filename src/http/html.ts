/**
 * Server-rendered HTML (the hosted checkout, the operator console, the API reference): every value
 * interpolated into `html` is escaped unless it is already Html, so partner- and payer-supplied text
 * can't become markup.
 */
export class Html {
  constructor(readonly value: string) {}
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export function renderHtml(v: unknown): string {
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(renderHtml).join('');
  if (v === null || v === undefined || v === false) return '';
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  return new Html(strings.reduce((out, s, i) => out + renderHtml(values[i - 1]) + s));
}
