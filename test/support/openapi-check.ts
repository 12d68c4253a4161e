import { AssertionError } from 'node:assert';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { OpenApiDocument } from '../../src/http/openapi/document';

/**
 * Checks answers against the OpenAPI document: for a request to a documented operation (method and
 * path template), the status must be one the operation documents, the body must match that
 * response's schema (ajv, JSON Schema 2020-12) and its required headers must be there. Requests to
 * anything else (unknown paths, admin routes, a method the path lacks) are not checked.
 */
export interface ResponseChecker {
  /** Throws when a documented operation answers something its document doesn't say. */
  check(answer: { method: string; path: string; status: number; headers: Headers; body: unknown; text: string }): void;
  /** The operation a request reaches, if documented. */
  operationFor(method: string, path: string): { template: string; operation: Operation } | undefined;
  /** A compiled validator for a schema of the document (refs to components resolve). */
  validator(schema: unknown): ValidateFunction;
}

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  responses: Record<string, Json>;
}

/** An answer its document does not allow: an assertion failure, so a poll fails on it at once. */
export class OpenApiViolation extends AssertionError {
  constructor(message: string) {
    super({ message });
    this.name = 'OpenApiViolation';
  }
}

const COMPONENTS_ID = 'urn:partners-openapi:components';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** #/components/schemas/X -> a ref into the components schema ajv holds (its $defs). */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')
        ? `${COMPONENTS_ID}#/$defs/${v.slice('#/components/schemas/'.length)}`
        : rewriteRefs(v),
    ]),
  );
}

export function createResponseChecker(doc: OpenApiDocument): ResponseChecker {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  // OpenAPI's own schema keywords (annotations for ajv).
  ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(doc.components?.schemas ?? {}) as Json });

  const deref = <T>(value: unknown): T => {
    const ref = (value as { $ref?: string } | undefined)?.$ref;
    if (!ref) return value as T;
    const [, , kind, name] = ref.split('/');
    return (doc.components as Record<string, Record<string, unknown>>)[kind!]![name!] as T;
  };

  const compiled = new Map<unknown, ValidateFunction>();
  const validator = (schema: unknown): ValidateFunction => {
    let v = compiled.get(schema);
    if (!v) {
      v = ajv.compile(rewriteRefs(schema) as Json);
      compiled.set(schema, v);
    }
    return v;
  };

  // Literal paths before templated ones (/v2/accounts/external/{id} before /v2/accounts/{id}/...).
  const routes = Object.entries(doc.paths ?? {})
    .map(([template, item]) => ({
      template,
      item: item as Record<string, Operation>,
      params: (template.match(/\{/g) ?? []).length,
      regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    }))
    .sort((a, b) => a.params - b.params);

  const operationFor = (method: string, path: string) => {
    const pathname = path.split('?')[0]!;
    const route = routes.find((r) => r.regex.test(pathname));
    const m = method.toLowerCase() as (typeof METHODS)[number];
    const operation = route && METHODS.includes(m) ? route.item[m] : undefined;
    return route && operation ? { template: route.template, operation } : undefined;
  };

  return {
    operationFor,
    validator,
    check({ method, path, status, headers, body, text }) {
      const found = operationFor(method, path);
      if (!found) return;
      const name = `${found.operation.operationId ?? '?'} (${method.toUpperCase()} ${found.template})`;
      const response = deref<Json | undefined>(found.operation.responses[String(status)]);
      if (!response) {
        throw new OpenApiViolation(
          `OpenAPI: ${name} answered ${status}, a status its document does not list (${Object.keys(found.operation.responses).join(', ')}); body: ${text.slice(0, 500)}`,
        );
      }
      for (const [header, spec] of Object.entries((response.headers ?? {}) as Record<string, unknown>)) {
        if (deref<{ required?: boolean }>(spec).required && !headers.has(header)) {
          throw new OpenApiViolation(`OpenAPI: ${name} answered ${status} without its required header ${header}`);
        }
      }
      const schema = (response.content as Record<string, { schema?: unknown }> | undefined)?.['application/json']?.schema;
      if (!schema) return;
      const validate = validator(schema);
      if (!validate(body)) {
        throw new OpenApiViolation(
          `OpenAPI: ${name} answered ${status} with a body its document does not allow: ${ajv.errorsText(validate.errors, { separator: '; ' })}\nbody: ${text.slice(0, 1500)}`,
        );
      }
    },
  };
}
