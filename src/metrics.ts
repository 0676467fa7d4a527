/**
 * Counters and gauges in the Prometheus text format, for GET /metrics. Labels never carry a
 * user, a token or an id: only statuses and operation ids.
 */
export class Metrics {
  private readonly counters = new Map<string, { help: string; values: Map<string, number> }>();
  private readonly sampled = new Map<
    string,
    { help: string; type: "gauge" | "counter"; read: () => number }
  >();

  counter(name: string, help: string): (labels?: Record<string, string>, by?: number) => void {
    const entry = { help, values: new Map<string, number>() };
    this.counters.set(name, entry);
    return (labels = {}, by = 1) => {
      const key = Object.entries(labels)
        .map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, "_")}"`)
        .join(",");
      entry.values.set(key, (entry.values.get(key) ?? 0) + by);
    };
  }

  gauge(name: string, help: string, read: () => number): void {
    this.sampled.set(name, { help, type: "gauge", read });
  }

  /** A counter kept elsewhere (CPU time, token exchanges), read when rendered. */
  counterFrom(name: string, help: string, read: () => number): void {
    this.sampled.set(name, { help, type: "counter", read });
  }

  render(): string {
    const lines: string[] = [];
    for (const [name, { help, values }] of this.counters) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
      if (values.size === 0) lines.push(`${name} 0`);
      for (const [labels, value] of values)
        lines.push(`${name}${labels ? `{${labels}}` : ""} ${value}`);
    }
    for (const [name, { help, type, read }] of this.sampled) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${read()}`);
    }
    return `${lines.join("\n")}\n`;
  }
}
