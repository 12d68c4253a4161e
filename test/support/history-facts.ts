import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * What the coverage check of the recorded histories reads: the patches and continue-as-new calls of
 * workflows/ (parsed from the source), and, from a recorded history (its JSON as record-histories.ts
 * writes it), its workflow type, its patch markers and whether the run continued as new.
 */

const WORKFLOWS_DIR = path.resolve(__dirname, '../../workflows');

function workflowSources(dir = WORKFLOWS_DIR): Array<{ file: string; source: string }> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => ({ file: path.join('workflows', f), source: readFileSync(path.join(dir, f), 'utf8') }));
}

const lineOf = (source: string, index: number) => source.slice(0, index).split('\n').length;

/**
 * Every `patched('<id>')` of workflows/ (or of the sources given): id -> its first call site; and
 * calls whose id is no literal.
 */
export function patchCallSites(sources = workflowSources()): { ids: Map<string, string>; unreadable: string[] } {
  const ids = new Map<string, string>();
  const unreadable: string[] = [];
  for (const { file, source } of sources) {
    for (const m of source.matchAll(/\b(patched|deprecatePatch)\(\s*(?:(['"])([^'"]+)\2\s*\))?/g)) {
      const site = `${file}:${lineOf(source, m.index)}`;
      if (m[3] === undefined) unreadable.push(site);
      else if (m[1] === 'patched' && !ids.has(m[3])) ids.set(m[3], site);
    }
  }
  return { ids, unreadable };
}

/** Workflow types (function names) that call `continueAsNew<typeof X>`; an untyped call throws. */
export function continueAsNewTypes(): string[] {
  const types = new Set<string>();
  for (const { file, source } of workflowSources()) {
    for (const m of source.matchAll(/\bcontinueAsNew\b(<typeof (\w+)>)?\(/g)) {
      if (!m[2])
        throw new Error(
          `${file}:${lineOf(source, m.index)}: continueAsNew without <typeof workflow>: the coverage check can't tell whose it is`,
        );
      types.add(m[2]);
    }
  }
  return [...types].sort();
}

/**
 * The workflow types the worker runs: the names workflows/index.ts exports (`export { a, b } from`,
 * `export function`), or those of the source given.
 */
export function workflowTypes(source = readFileSync(path.join(WORKFLOWS_DIR, 'index.ts'), 'utf8')): string[] {
  const listed = [...source.matchAll(/^export\s*\{([^}]*)\}/gm)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((name) =>
        name
          .trim()
          .split(/\s+as\s+/)
          .pop()!,
      )
      .filter((name) => name !== '' && !name.startsWith('type ')),
  );
  const declared = [...source.matchAll(/^export\s+(?:async\s+)?function\s+(\w+)/gm)].map((m) => m[1]!);
  return [...new Set([...listed, ...declared])].sort();
}

interface EncodedEvent {
  eventType?: string;
  workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } };
  markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, { payloads?: Array<{ data?: string }> }> };
}

const eventsOf = (history: unknown): EncodedEvent[] => (history as { events?: EncodedEvent[] }).events ?? [];

/** The ids of the patch markers (`core_patch`, as SDK 1.24 records patched()) a history holds. */
export function patchMarkers(history: unknown): string[] {
  return eventsOf(history)
    .filter((e) => e.eventType === 'EVENT_TYPE_MARKER_RECORDED' && e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .map((e) => {
      const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data ?? '';
      return (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string }).id;
    });
}

export function historyFacts(history: unknown): { workflowType: string | undefined; continuedAsNew: boolean } {
  const events = eventsOf(history);
  return {
    workflowType: events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name,
    continuedAsNew: events.some((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW'),
  };
}
