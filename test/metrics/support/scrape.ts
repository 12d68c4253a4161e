import assert from 'node:assert/strict';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export type MetricFamily = ReturnType<typeof parsePrometheusTextFormat>[number];

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** What parse-prometheus-text-format reads (families, their types and help). */
  families: MetricFamily[];
  /** Every sample line (the parser folds a labelled histogram's series into one). */
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL_VALUE = '"(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const LABEL_NAME = '[a-zA-Z_][a-zA-Z0-9_]*';
// Prometheus reads a value with Go's ParseFloat: NaN in any case (prom-client writes an empty summary's mean as "Nan").
const VALUE = '(?:[+-]?(?:\\d+\\.?\\d*(?:[eE][+-]?\\d+)?|\\.\\d+(?:[eE][+-]?\\d+)?)|[+-]?Inf|[Nn][Aa][Nn])';
const PAIR = `${LABEL_NAME}=${LABEL_VALUE}`;
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${PAIR}(?:,${PAIR})*,?)?)\\})? (${VALUE})(?: -?\\d+)?$`);
const LABELS = new RegExp(`(${LABEL_NAME})=(${LABEL_VALUE})`, 'g');
const HELP = new RegExp(`^# HELP (${NAME})(?: .*)?$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);

/**
 * Reads a whole exposition: each line checked against the text format's grammar (every sample well
 * formed, every family typed once, every sample under a typed family), then parsed by
 * parse-prometheus-text-format, which throws on a line it can't read.
 */
export function parseExposition(text: string): Exposition {
  const typed = new Map<string, string>();
  const samples: Sample[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line === '') continue;
    const type = TYPE.exec(line);
    if (type) {
      assert.ok(!typed.has(type[1]!), `line ${i + 1}: family ${type[1]} typed twice`);
      typed.set(type[1]!, type[2]!);
      continue;
    }
    if (HELP.test(line)) continue;
    assert.ok(!line.startsWith('#') || line.startsWith('# '), `line ${i + 1}: ${line}`);
    if (line.startsWith('# ')) continue;
    const sample = SAMPLE.exec(line);
    assert.ok(sample, `line ${i + 1} is no valid sample: ${line}`);
    const name = sample[1]!;
    const familyName = typed.has(name) ? name : name.replace(/_(bucket|sum|count|total|created)$/, '');
    assert.ok(typed.has(familyName), `line ${i + 1}: sample ${name} of no typed family`);
    // The format's escapes (\\, \", \n) are JSON's.
    const labels = Object.fromEntries([...(sample[2] ?? '').matchAll(LABELS)].map((m) => [m[1]!, JSON.parse(m[2]!) as string]));
    samples.push({ name, labels, value: Number(sample[3]) });
  }
  const families = parsePrometheusTextFormat(text);
  assert.deepEqual(families.map((f) => f.name).sort(), [...typed.keys()].sort(), 'the parser read every typed family');
  return { families, samples };
}

export function family(e: Exposition, name: string): MetricFamily {
  const found = e.families.find((f) => f.name === name);
  assert.ok(found, `metric ${name} in the exposition`);
  return found;
}

/** The samples of a sample name (a histogram's `_count`, a gauge's own name). */
export function samplesOf(e: Exposition, name: string): Sample[] {
  return e.samples.filter((s) => s.name === name);
}

/** The value of the sample with exactly these labels (0 when there is none: a count of nothing). */
export function sampleValue(e: Exposition, name: string, labels: Record<string, string> = {}): number {
  family(e, name.replace(/_(bucket|sum|count)$/, ''));
  const sample = samplesOf(e, name).find((s) => sameLabels(s.labels, labels));
  return sample ? sample.value : 0;
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}
