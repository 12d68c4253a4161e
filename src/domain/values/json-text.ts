/**
 * JSON as the service writes it for people and programs alike (the CLI's one line, an error's
 * details): a bigint (an amount in atomic units) is its decimal string, as amounts are in the API.
 * JSON.stringify alone throws on a bigint, and does so exactly when a report carries amounts.
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** The same value with its bigints as decimal strings: safe to hand to a serializer that can't take them. */
export function withDecimalStrings(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(jsonText(value)) as unknown);
}
