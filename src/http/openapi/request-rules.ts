import type { CreateDocumentOptions } from 'zod-openapi';
import type { TEnvironments } from '../../config/environments';
import { ZAssetSymbol, ZFiatCurrency } from '../../domain/values/environment-values';
import { METADATA_LIMITS, ZMetadata } from '../../domain/values/metadata';
import { ZChainId } from '../../platform/int4';

/**
 * Rules every request meets that its zod schema checks in code (a refinement, parseInput's text
 * check) or that the configuration decides, stated in the document's request schemas so a client or
 * a fuzzer knows them: the document says what the service refuses.
 */

type JsonSchema = Record<string, unknown>;

/** The values the environments offer, listed as enums (their union: one document serves sandbox and production). */
export interface OfferedValues {
  chainIds: number[];
  assetSymbols: string[];
  fiatCurrencies: string[];
}

export function offeredValues(environments: TEnvironments): OfferedValues {
  const envs = Object.values(environments.environments);
  const networks = envs.flatMap((e) => e.networks);
  const sorted = <T>(values: T[]) => [...new Set(values)].sort();
  return {
    chainIds: [...new Set(networks.map((n) => n.chainId))].sort((a, b) => a - b),
    assetSymbols: sorted(networks.flatMap((n) => n.assets.map((a) => a.symbol))),
    fiatCurrencies: sorted(envs.flatMap((e) => e.publicPayments?.allowedFiatCurrencies ?? [])),
  };
}

/**
 * A string without NUL, as parseInput lets through (400 otherwise). An unpaired surrogate is refused
 * too, but no pattern can say so for Schemathesis: its validator (Rust regex) can't name surrogates,
 * and drops such a pattern, so the descriptions say it.
 */
const STORABLE = { not: { pattern: '\\u0000' } };
const STORABLE_NOTE = 'Text holds no NUL and no unpaired UTF-16 surrogate (PostgreSQL and UTF-8 can’t store them).';

/**
 * Partner metadata as JSON Schema: objects nest at most METADATA_LIMITS.depth levels (the metadata
 * object itself the first), so the values of the last level are scalars. The byte limit is no
 * keyword's: the description says it.
 */
export function metadataJsonSchema(): JsonSchema {
  const L = METADATA_LIMITS;
  const key = { type: 'string', ...STORABLE };
  const scalars: JsonSchema[] = [
    { type: 'string', maxLength: L.stringChars, ...STORABLE },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'null' },
  ];
  // A value inside `level` containers: a container itself while level < depth.
  const value = (level: number): JsonSchema =>
    level >= L.depth
      ? { anyOf: scalars }
      : {
          anyOf: [
            ...scalars,
            { type: 'array', maxItems: L.arrayItems, items: value(level + 1) },
            { type: 'object', maxProperties: L.keys, propertyNames: key, additionalProperties: value(level + 1) },
          ],
        };
  return {
    type: 'object',
    maxProperties: L.keys,
    propertyNames: key,
    additionalProperties: value(1),
    description: `Your own JSON object: at most ${L.bytes} bytes as JSON, ${L.depth} levels of objects or arrays (this object the first), ${L.keys} keys per object, ${L.arrayItems} items per array, ${L.stringChars} characters per string. ${STORABLE_NOTE}`,
  };
}

/** A string schema takes the text rule unless its values are listed or its pattern leaves no room for NUL. */
function freeText(json: JsonSchema): boolean {
  if (json.type !== 'string' || 'enum' in json || 'const' in json || 'not' in json) return false;
  return typeof json.pattern !== 'string' || json.pattern.includes('[^');
}

function addTextRule(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(addTextRule);
  if (!node || typeof node !== 'object') return;
  const json = node as JsonSchema;
  if (freeText(json)) Object.assign(json, STORABLE);
  Object.values(json).forEach(addTextRule);
}

/**
 * The text rule on every string of every request body and parameter (the components they share are
 * responses', left alone). Done on the built document, not per zod schema: a component rendered for
 * both requests and responses would otherwise split in two.
 */
export function withTextRule<D extends { paths?: Record<string, unknown> }>(built: D): D {
  // A copy: the document's schemas share objects with what other routes serve (a country's bank
  // account schema, published by the requirements endpoint as it is).
  const doc = structuredClone(built);
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item as Record<string, { requestBody?: unknown; parameters?: unknown }>)) {
      addTextRule(op.requestBody);
      addTextRule(op.parameters);
    }
  }
  return doc;
}

/**
 * The document's `override`: on request schemas (io input), metadata gets its bounded shape, and chain ids, asset symbols and fiat currencies the environments'
 * values when `offered` is given (the served document; the typed client is built without them, as
 * it serves any deployment).
 */
export function requestRules(offered?: OfferedValues): NonNullable<CreateDocumentOptions['override']> {
  const listed = new Map<unknown, unknown[]>(
    offered
      ? [
          [ZChainId, offered.chainIds],
          [ZAssetSymbol, offered.assetSymbols],
          [ZFiatCurrency, offered.fiatCurrencies],
        ]
      : [],
  );
  return ({ jsonSchema, zodSchema, io }) => {
    if (io !== 'input') return;
    const json = jsonSchema as JsonSchema;
    if (zodSchema === ZMetadata) {
      for (const k of Object.keys(json)) delete json[k];
      Object.assign(json, metadataJsonSchema());
      return;
    }
    const values = listed.get(zodSchema);
    // An empty list (nothing offered anywhere) stays unlisted: every value is refused by status, as documented.
    if (values && values.length > 0) {
      json.enum = values;
      delete json.pattern;
    }
  };
}
