/**
 * Counters and histograms for the request path, rendered in the Prometheus text format next to
 * prom-client's (process metrics, scrape-time gauges). prom-client hashes the label object on
 * every `inc`/`observe` (about 3% of the gateway's CPU per request); here each distinct label
 * set is resolved once to a series, and recording is an array update. Label sets must be
 * bounded by the caller (route templates, known models, upstream names, status classes).
 */

type Labels = Record<string, string | number>;

const escapeLabel = (v: string | number) =>
  String(v).replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');

function labelText(names: readonly string[], values: Labels, extra?: string): string {
  const parts = names.map((n) => `${n}="${escapeLabel(values[n] ?? '')}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** Prometheus renders numbers as Go does: integers plainly, +Inf/-Inf/NaN by name. */
function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

export interface HotMetric {
  render(): string;
}

export class HotCounter<L extends string> implements HotMetric {
  private readonly series = new Map<string, { labels: string; value: number }>();

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly L[],
  ) {}

  /** The series for these label values (made on first use, then reused). */
  labels(values: Record<L, string | number>): { inc(by?: number): void } {
    const id = this.labelNames.map((n) => values[n]).join('\u0000');
    let s = this.series.get(id);
    if (!s) {
      s = { labels: labelText(this.labelNames, values), value: 0 };
      this.series.set(id, s);
    }
    const series = s;
    return {
      inc(by = 1) {
        series.value += by;
      },
    };
  }

  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} counter\n`;
    for (const s of this.series.values()) out += `${this.name}${s.labels} ${num(s.value)}\n`;
    return out;
  }
}

interface HistogramSeries {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

export class HotHistogram<L extends string> implements HotMetric {
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly L[],
    private readonly buckets: readonly number[],
  ) {}

  labels(values: Record<L, string | number>): { observe(v: number): void } {
    const id = this.labelNames.map((n) => values[n]).join('\u0000');
    let s = this.series.get(id);
    if (!s) {
      s = { labels: { ...values }, counts: new Array(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.series.set(id, s);
    }
    const series = s;
    const buckets = this.buckets;
    return {
      observe(v: number) {
        if (!Number.isFinite(v)) return;
        let i = 0;
        while (i < buckets.length && v > buckets[i]!) i++;
        if (i < buckets.length) series.counts[i]!++;
        series.sum += v;
        series.count++;
      },
    };
  }

  render(): string {
    const n = this.name;
    let out = `# HELP ${n} ${this.help}\n# TYPE ${n} histogram\n`;
    for (const s of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += s.counts[i]!;
        out += `${n}_bucket${labelText(this.labelNames, s.labels, `le="${num(this.buckets[i]!)}"`)} ${cumulative}\n`;
      }
      out += `${n}_bucket${labelText(this.labelNames, s.labels, 'le="+Inf"')} ${s.count}\n`;
      out += `${n}_sum${labelText(this.labelNames, s.labels)} ${num(s.sum)}\n`;
      out += `${n}_count${labelText(this.labelNames, s.labels)} ${s.count}\n`;
    }
    return out;
  }
}
