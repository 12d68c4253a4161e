import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * No import cycles among the modules of the service (src/, activities/, workflows/) and of the tools
 * that run it (bench/, simulate/, scripts/): a cycle means two modules are one concept split in two,
 * or a layer pointing back. `import type` counts too: it leaves nothing behind at run time, but a
 * circle of types is the same tangle for a reader (bench/context → figures → phases/scanner → context
 * was one).
 */
const ROOT = path.resolve(__dirname, '..', '..');
const DIRS = ['src', 'activities', 'workflows', 'bench', 'simulate', 'scripts'];
const IMPORT = /^\s*(?:import|export)\s+(?:[^'";]*?\sfrom\s+)?'(\.[^']+)'/gm;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'generated' ? [] : sources(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

function resolve(from: string, spec: string): string | null {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts'), base]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return null;
}

/** Strongly connected components of more than one module (Tarjan), each a cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    order.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!));
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.map((f) => path.relative(ROOT, f)).sort());
    }
  };
  for (const v of graph.keys()) if (!order.has(v)) visit(v);
  return found;
}

test('no import cycles among the modules of src/, activities/, workflows/, bench/, simulate/ and scripts/ (type imports included)', () => {
  const graph = new Map<string, string[]>();
  for (const file of DIRS.flatMap((d) => sources(path.join(ROOT, d)))) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((m) => resolve(file, m[1]!)).filter((t): t is string => t !== null);
    graph.set(file, targets);
  }
  assert.ok(graph.size > 100, `${graph.size} modules read`);
  assert.deepEqual(cycles(graph), []);
});
