import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The heaviest frames of a V8 .cpuprofile by self time. A frame is "ours" when it lives in
 * this project's dist/, not in node_modules or Node itself.
 */
export function topFrames(dir, count = 15) {
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no .cpuprofile in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8"));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfMs = new Map();
  for (const [i, id] of profile.samples.entries()) {
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const frames = new Map();
  let total = 0;
  for (const [id, ms] of selfMs) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    if (functionName === "(idle)") continue;
    total += ms;
    const path = url.replace(/^file:\/\//, "");
    const short = path.includes("/node_modules/")
      ? path.replace(/.*\/node_modules\//, "node_modules/")
      : path.replace(/.*\/dist\//, "dist/");
    const where = url ? `${short}:${lineNumber + 1}` : "";
    const key = `${functionName || "(anonymous)"} ${where}`;
    frames.set(key, (frames.get(key) ?? 0) + ms);
  }
  return [...frames.entries()]
    .sort(([, a], [, b]) => b - a)
    .slice(0, count)
    .map(([frame, ms]) => ({
      frame,
      self_ms: Math.round(ms),
      self_pct: Math.round((ms / total) * 1000) / 10,
      ours: frame.includes(" dist/"),
    }));
}
