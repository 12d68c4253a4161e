// ESLint rule `local/import-boundaries`: which project files and packages a file may import, judged
// on the resolved file (so `../src/domain/x` and `../../src/domain/x` are the same module), which the
// core no-restricted-imports can't do: it only sees the specifier as written.
//
// Options: { allow?, allowTypeOnly?, deny?, message }, each matcher being
//   { packages?: ['@temporalio/workflow', ...], paths?: ['workflows/**', 'src/domain/x.ts', ...] }
// (`dir/**` is everything under dir; any other path is one file, repo-relative). With `allow`, only
// the allowed may be imported (`allowTypeOnly` adds `import type` sources); with `deny`, everything
// but the denied may. Node built-ins are left to no-restricted-imports, which says why.

import { builtinModules } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BUILTINS = new Set(builtinModules);
const EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json'];

/** Repo-relative file a relative specifier points at (TypeScript's resolution, roughly). */
function resolveRelative(fromFile, spec) {
  const abs = path.resolve(path.dirname(fromFile), spec);
  const candidates = [
    abs,
    ...EXTENSIONS.map((e) => abs + e),
    ...(/\.[cm]?js$/.test(abs) ? ['.ts', '.mts', '.cts'].map((e) => abs.replace(/\.[cm]?js$/, e)) : []),
    ...EXTENSIONS.map((e) => path.join(abs, `index${e}`)),
  ];
  const found = candidates.find((c) => {
    try {
      return fs.statSync(c).isFile();
    } catch {
      return false;
    }
  });
  return path
    .relative(ROOT, found ?? abs)
    .split(path.sep)
    .join('/');
}

function matches(matcher, target) {
  if (!matcher) return false;
  if (target.kind === 'package') {
    return (matcher.packages ?? []).some((p) => target.spec === p || target.spec.startsWith(`${p}/`));
  }
  return (matcher.paths ?? []).some((p) => (p.endsWith('/**') ? target.file.startsWith(p.slice(0, -2)) : target.file === p));
}

const matcherSchema = {
  type: 'object',
  properties: { packages: { type: 'array', items: { type: 'string' } }, paths: { type: 'array', items: { type: 'string' } } },
  additionalProperties: false,
};

/** @type {import('eslint').Rule.RuleModule} */
const importBoundaries = {
  meta: {
    type: 'problem',
    docs: { description: 'Restrict which project files and packages a file may import, on resolved paths' },
    schema: [
      {
        type: 'object',
        properties: { allow: matcherSchema, allowTypeOnly: matcherSchema, deny: matcherSchema, message: { type: 'string' } },
        additionalProperties: false,
      },
    ],
    messages: { forbidden: "'{{spec}}' may not be imported here: {{message}}" },
  },
  create(context) {
    const { allow, allowTypeOnly, deny, message = '' } = context.options[0] ?? {};
    const filename = context.filename;

    function check(node, source, typeOnly) {
      if (!source || source.type !== 'Literal' || typeof source.value !== 'string') return;
      const spec = source.value;
      if (spec.startsWith('node:') || BUILTINS.has(spec)) return;
      const target = spec.startsWith('.') ? { kind: 'file', spec, file: resolveRelative(filename, spec) } : { kind: 'package', spec };
      const ok = allow ? matches(allow, target) || (typeOnly && matches(allowTypeOnly, target)) : !matches(deny, target);
      if (!ok) context.report({ node: source, messageId: 'forbidden', data: { spec, message } });
    }

    // `import type { A }` and `import { type A, type B }` are both type-only.
    const importIsTypeOnly = (node) =>
      node.importKind === 'type' ||
      (node.specifiers.length > 0 && node.specifiers.every((s) => s.type === 'ImportSpecifier' && s.importKind === 'type'));
    const exportIsTypeOnly = (node) =>
      node.exportKind === 'type' || (node.specifiers?.length > 0 && node.specifiers.every((s) => s.exportKind === 'type'));

    return {
      ImportDeclaration: (node) => check(node, node.source, importIsTypeOnly(node)),
      ExportNamedDeclaration: (node) => check(node, node.source, exportIsTypeOnly(node)),
      ExportAllDeclaration: (node) => check(node, node.source, node.exportKind === 'type'),
      ImportExpression: (node) => check(node, node.source, false),
      TSImportEqualsDeclaration: (node) => check(node, node.moduleReference?.expression, node.importKind === 'type'),
      CallExpression: (node) => {
        if (node.callee.type === 'Identifier' && node.callee.name === 'require') check(node, node.arguments[0], false);
      },
    };
  },
};

export default { meta: { name: 'local' }, rules: { 'import-boundaries': importBoundaries } };
