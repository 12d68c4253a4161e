import { z } from 'zod';

/** Partner metadata limits (spec Limits): 4096 bytes, depth 3, 25 keys, 512-char strings, 50 items. */
export const METADATA_LIMITS = { bytes: 4096, depth: 3, keys: 25, stringChars: 512, arrayItems: 50 } as const;

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

function check(value: unknown, depth: number, path: string, problems: string[]): void {
  if (value === null || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) problems.push(`${path}: numbers must be finite`);
    return;
  }
  if (typeof value === 'string') {
    if (value.length > METADATA_LIMITS.stringChars) problems.push(`${path}: strings are at most ${METADATA_LIMITS.stringChars} characters`);
    return;
  }
  if (depth >= METADATA_LIMITS.depth) {
    problems.push(`${path}: nesting is at most ${METADATA_LIMITS.depth} levels`);
    return;
  }
  if (Array.isArray(value)) {
    if (value.length > METADATA_LIMITS.arrayItems) problems.push(`${path}: arrays hold at most ${METADATA_LIMITS.arrayItems} items`);
    value.forEach((v, i) => check(v, depth + 1, `${path}[${i}]`, problems));
    return;
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > METADATA_LIMITS.keys) problems.push(`${path}: objects hold at most ${METADATA_LIMITS.keys} keys`);
    for (const [k, v] of entries) check(v, depth + 1, `${path}.${k}`, problems);
    return;
  }
  problems.push(`${path}: not a JSON value`);
}

export const ZMetadata = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const problems: string[] = [];
    check(value, 0, 'metadata', problems);
    if (Buffer.byteLength(JSON.stringify(value), 'utf8') > METADATA_LIMITS.bytes) {
      problems.push(`metadata: at most ${METADATA_LIMITS.bytes} bytes of JSON`);
    }
    for (const message of problems) ctx.addIssue({ code: 'custom', message });
  })
  .transform((v) => v as Record<string, Json>);
