/**
 * The HTTP request-duration histogram, observed once per request. prom-client's Histogram turns
 * the label object into a hash string and validates it on every observe(). Here each (route,
 * method, status) has one series object, found through nested Maps keyed by the route pattern and
 * method strings (the same string objects on every request, so their hashes are cached) and the
 * numeric status. Kept over prom-client's Histogram because `npm run bench` measured it: it saves
 * ~6% of a Ping's CPU (docs/performance.md).
 *
 * prom-client still owns the exposition: this object is registered in the app's prom-client
 * Registry (`registerMetric`) and answers `get()` in the shape prom-client's own histograms do,
 * so /metrics prints the same `_bucket` (cumulative, with `le`), `_sum` and `_count` lines.
 */
import type { Registry } from "prom-client";

interface Series {
  readonly labels: { method: string; route: string; status_code: string };
  /** Observations per bucket, not cumulative; the last slot is above the largest bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

type Sample = { labels: Record<string, string | number>; value: number; metricName: string };

export class RequestDurationHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly series = new Map<string, Map<string, Map<number, Series>>>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  observe(method: string, route: string, statusCode: number, seconds: number): void {
    let byMethod = this.series.get(route);
    if (byMethod === undefined) this.series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(statusCode);
    if (series === undefined) {
      series = { labels: { method, route, status_code: String(statusCode) }, counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      byStatus.set(statusCode, series);
    }
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket++;
    series.counts[bucket]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  /** The samples in prom-client's metric shape, for its Registry. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const byMethod of this.series.values()) {
      for (const byStatus of byMethod.values()) {
        for (const { labels, counts, sum, count } of byStatus.values()) {
          let cumulative = 0;
          this.bounds.forEach((le, index) => {
            cumulative += counts[index]!;
            values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
          });
          values.push({ labels: { le: "+Inf", ...labels }, value: count, metricName: `${this.name}_bucket` });
          values.push({ labels, value: sum, metricName: `${this.name}_sum` });
          values.push({ labels, value: count, metricName: `${this.name}_count` });
        }
      }
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}
